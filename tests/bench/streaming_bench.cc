// streaming-bench: figures for berth's streaming server with the host-process backend — exec
// round trip of `true` (URL registration, upgrade, streams, process, exit status) and
// port-forward throughput over SPDY and WebSocket. Prints figures, asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "berth/streaming_server.h"
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
      std::printf("  %s: run %d failed: %s\n", name, i, r.ok() ? r->error_stream.c_str() : r.status().message().c_str());
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

}  // namespace

int main(int argc, char** argv) {
  int runs = 200;
  uint64_t mib = 256;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--mib") && i + 1 < argc) mib = uint64_t(std::atoll(argv[++i]));
    else {
      std::fprintf(stderr, "usage: streaming-bench [--runs N] [--mib M]\n");
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
  std::printf("streaming-bench: server %s, %u cpus\n", (*server)->address().c_str(), std::thread::hardware_concurrency());
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
