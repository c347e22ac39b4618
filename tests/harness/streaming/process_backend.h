// ProcessBackend: a StreamingBackend for tests and benchmarks that runs real host processes
// (posix_spawn of the command, pipes or a pty from openpty) instead of containers, and connects
// ports on 127.0.0.1 of the host ("host" sandbox) or of a named netns (/run/netns/<sandbox>).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "berth/streaming_backend.h"

namespace berth::test {

class ProcessBackend : public StreamingBackend {
 public:
  Result<StreamIo> exec(const ExecTarget& target) override;
  // Runs the command set for the container id (as if attaching to its main process).
  Result<StreamIo> attach(const AttachTarget& target) override;
  Result<UniqueFd> connect_port(const std::string& sandbox_id, int32_t port) override;

  void set_attach_command(const std::string& container_id, std::vector<std::string> argv);
  // While held, connect_port waits (as a connect to a pod's full listener would) until released.
  void hold_connects(bool hold);
  int connects_waiting();
  int cancelled() const { return cancelled_; }
  std::vector<pid_t> started();  // pids of every process started, in order

 private:
  Result<StreamIo> spawn(const std::vector<std::string>& argv, bool tty, bool in, bool out, bool err, uint16_t width,
                         uint16_t height);
  std::mutex mu_;
  std::map<std::string, std::vector<std::string>> attach_;
  std::vector<pid_t> started_;
  std::atomic<int> cancelled_{0};
  std::condition_variable held_cv_;
  bool hold_ = false;
  int waiting_ = 0;
};

}  // namespace berth::test
