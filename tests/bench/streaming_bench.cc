// streaming-bench: figures for berth's streaming server with the host-process backend — exec
// round trip of `true` (URL registration, upgrade, streams, process, exit status) and
// port-forward throughput over SPDY and WebSocket; with --flood, what hostile clients cost: exec
// sessions whose client floods pings and never reads, one after another for SECONDS (10) per
// protocol, with the server's RSS and threads (this process: the flooding client holds no
// buffers) before, at the peak and after, and the bytes each client got in before it was cut
// off. Prints figures, asserts nothing.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "berth/streaming_server.h"
#include "berth/test/hostile_peer.h"
#include "berth/test/streaming_client.h"
#include "process_backend.h"
#include "test_servers.h"

using namespace berth;
using namespace berth::test;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

void exec_round_trip(StreamingServer& server, const char* name, StreamOptions o, int runs) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto t = Clock::now();
    auto url = server.register_exec({"bench", {"true"}, false, false, true, true});
    auto r = run_command(*url, o);
    if (!r.ok() || r->exit_code != 0) {
      std::printf("  %s: run %d failed: %s\n", name, i,
                  r.ok() ? r->error_stream.c_str() : r.status().message().c_str());
      return;
    }
    times.push_back(ms_since(t));
  }
  std::sort(times.begin(), times.end());
  std::printf("  exec `true` round trip, %-22s p50 %6.2f ms   p90 %6.2f ms   (%d runs)\n", name,
              times[times.size() / 2], times[times.size() * 9 / 10], runs);
}

std::string header(uint64_t n, char mode) {
  std::string h(9, '\0');
  for (int i = 0; i < 8; ++i) h[i] = char(n >> (56 - 8 * i));
  h[8] = mode;
  return h;
}

void throughput(StreamingServer& server, TestServer& target, const char* name, StreamOptions o, uint64_t bytes) {
  auto url = server.register_port_forward("host");
  auto pf = PortForwardClient::connect(*url, o, {target.port(), target.port()});
  if (!pf.ok()) {
    std::printf("  %s: %s\n", name, pf.status().message().c_str());
    return;
  }
  // Download: the pod's side sends `bytes`.
  auto s = (*pf)->open(target.port());
  auto t = Clock::now();
  (void)(*s)->write(header(bytes, 'd'));
  uint64_t got = 0;
  while (got < bytes) {
    auto r = (*s)->read(1 << 20, std::chrono::seconds(60));
    if (!r.ok() || r->empty()) break;
    got += r->size();
  }
  double down = ms_since(t);
  // Upload: the client sends `bytes`, the pod's side answers "ok".
  auto u = (*pf)->open(target.port());
  std::string chunk = pseudo_random(1 << 20, 3);
  t = Clock::now();
  (void)(*u)->write(header(bytes, 'u'));
  for (uint64_t sent = 0; sent < bytes; sent += chunk.size()) (void)(*u)->write(chunk);
  auto ok = (*u)->read_exact(2, std::chrono::seconds(120));
  double up = ms_since(t);
  double mib = double(bytes) / (1 << 20);
  std::printf("  port-forward %-26s download %7.1f MiB/s   upload %7.1f MiB/s   (%.0f MiB each way%s)\n", name,
              got == bytes ? mib / (down / 1000) : 0.0, ok.ok() ? mib / (up / 1000) : 0.0, mib,
              got == bytes && ok.ok() ? "" : ", INCOMPLETE");
}

// This process's VmRSS and thread count, sampled until stopped; keeps the peaks.
class Sampler {
 public:
  Sampler()
      : thread_([this] {
          while (!stop_) {
            peak_rss_ = std::max<uint64_t>(peak_rss_, vm_rss_kib(::getpid()));
            peak_threads_ = std::max(peak_threads_.load(), thread_count(::getpid()));
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }) {}
  ~Sampler() {
    stop_ = true;
    thread_.join();
  }
  uint64_t peak_rss() const { return peak_rss_; }
  int peak_threads() const { return peak_threads_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> peak_rss_{0};
  std::atomic<int> peak_threads_{0};
  std::thread thread_;
};

// Waits for the sessions to end and the server to settle.
void settle(StreamingServer& server) {
  for (int i = 0; i < 1000 && server.active_sessions() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
}

// Exec sessions whose clients flood pings without reading, one after another for `seconds`.
void flood(StreamingServer& server, ProcessBackend& backend, const char* name, bool websocket, double seconds) {
  settle(server);
  uint64_t rss_before = vm_rss_kib(::getpid());
  int threads_before = thread_count(::getpid());
  std::vector<uint64_t> sent;
  int not_cut = 0;
  Sampler sampler;  // one thread more from here on, not counted below
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  std::string unit = websocket ? HostilePeer::ws_frame(0x9, std::string(125, 'p')) : HostilePeer::spdy_ping(1);
  while (Clock::now() < end) {
    size_t procs = backend.started().size();
    auto url = server.register_exec({"bench", {"sleep", "1000"}, false, true, true, true});
    auto peer = websocket ? HostilePeer::websocket(*url, "v5.channel.k8s.io")  //
                          : HostilePeer::spdy(*url, "v4.channel.k8s.io");
    if (!peer.ok()) {
      std::printf("  %s: %s\n", name, peer.status().message().c_str());
      return;
    }
    if (!websocket) (void)(*peer)->open_command_streams(true, true, true);
    for (int i = 0; i < 1000 && backend.started().size() == procs; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // A server that never cuts the client off is flooded until the period ends.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    auto f = (*peer)->flood(unit, uint64_t(64) << 30, std::max(left, std::chrono::milliseconds(1000)));
    sent.push_back(f.sent);
    if (!f.cut_off) ++not_cut;
  }
  settle(server);
  std::sort(sent.begin(), sent.end());
  auto mib = [](uint64_t bytes) { return double(bytes) / (1 << 20); };
  std::printf(
      "  ping flood, %-10s %3zu clients in %.0f s, %d not cut off; MiB each got in before the cut: "
      "min %.1f median %.1f max %.1f\n",
      name, sent.size(), seconds, not_cut, mib(sent.front()), mib(sent[sent.size() / 2]), mib(sent.back()));
  std::printf("  %-22s RSS before %6.1f MiB  peak %6.1f MiB  after %6.1f MiB;  threads before %d  peak %d  after %d\n",
              "", double(rss_before) / 1024, double(sampler.peak_rss()) / 1024, double(vm_rss_kib(::getpid())) / 1024,
              threads_before, sampler.peak_threads() - 1, thread_count(::getpid()) - 1);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  uint64_t mib = 256;
  double flood_seconds = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--mib") && i + 1 < argc)
      mib = uint64_t(std::atoll(argv[++i]));
    else if (!std::strcmp(argv[i], "--flood"))
      flood_seconds = i + 1 < argc && argv[i + 1][0] != '-' ? std::atof(argv[++i]) : 10;
    else {
      std::fprintf(stderr, "usage: streaming-bench [--runs N] [--mib M] | --flood [SECONDS]\n");
      return 2;
    }
  }
  spdlog::set_level(spdlog::level::warn);
  ProcessBackend backend;
  auto server = StreamingServer::start({}, backend);
  if (!server.ok()) {
    std::fprintf(stderr, "streaming-bench: %s\n", server.status().message().c_str());
    return 1;
  }
  std::printf("streaming-bench: server %s, %u cpus\n", (*server)->address().c_str(),
              std::thread::hardware_concurrency());
  if (flood_seconds > 0) {
    spdlog::set_level(spdlog::level::err);  // every cut-off is a warning
    flood(**server, backend, "SPDY", false, flood_seconds);
    flood(**server, backend, "WebSocket", true, flood_seconds);
    return 0;
  }
  StreamOptions spdy;
  exec_round_trip(**server, "SPDY v4.channel.k8s.io", spdy, runs);
  StreamOptions ws;
  ws.transport = Transport::websocket;
  ws.protocols = {"v5.channel.k8s.io"};
  exec_round_trip(**server, "WebSocket v5", ws, runs);

  TestServer target(TestServer::Mode::sink_source);
  throughput(**server, target, "SPDY (flow control)", StreamOptions{}, mib << 20);
  StreamOptions go_like;
  go_like.spdy_flow_control = false;
  throughput(**server, target, "SPDY (like spdystream)", go_like, mib << 20);
  StreamOptions wsf;
  wsf.transport = Transport::websocket;
  wsf.protocols = {"v4.channel.k8s.io"};
  throughput(**server, target, "WebSocket v4.channel", wsf, mib << 20);
  return 0;
}
