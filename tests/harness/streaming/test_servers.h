// Helpers for streaming tests and benchmarks: a TCP echo/sink server on 127.0.0.1 (optionally in
// a network namespace), a network namespace made with `ip netns add` and removed on destruction,
// deterministic pseudo-random payloads, and a pids cgroup that keeps this process from starting
// threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "berth/unique_fd.h"

namespace berth::test {

// Accepts on 127.0.0.1:<port>. echo: every connection gets back what it sends until it
// half-closes (then the server half-closes). Otherwise "sink/source": a connection first sends an
// 8-byte big-endian count N and a mode byte ('u' upload: the server reads N bytes then answers
// "ok"; 'd' download: the server sends N pseudo-random bytes then closes).
class TestServer {
 public:
  enum class Mode { echo, sink_source };
  explicit TestServer(Mode mode = Mode::echo, const std::string& netns = "");
  ~TestServer();
  int port() const { return port_; }
  int connections() const { return connections_; }
  uint64_t bytes_sent() const { return sent_; }  // by 'd' (download) connections so far

 private:
  void serve(UniqueFd conn);
  Mode mode_;
  UniqueFd listener_;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<uint64_t> sent_{0};
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> open_fds_;
};

class Netns {
 public:
  Netns();  // `ip netns add berth-st-<random>` with lo up
  ~Netns();
  const std::string& name() const { return name_; }
  bool ok() const { return ok_; }

 private:
  std::string name_;
  bool ok_ = false;
};

std::string pseudo_random(size_t n, uint64_t seed);

// While it lives, this process sits in a cgroup v1 pids cgroup of its own whose limit is what it
// already has: no thread or process can be started (clone fails with EAGAIN). ok() is false when
// the pids hierarchy is not mounted at /sys/fs/cgroup/pids or cannot be written.
class PidsLimit {
 public:
  PidsLimit();
  ~PidsLimit();
  bool ok() const { return ok_; }

 private:
  std::string dir_, home_;
  bool ok_ = false;
};

}  // namespace berth::test
