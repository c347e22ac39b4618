// crash-bench: what a SIGKILL of the runtime costs a node. Prints figures, asserts nothing.
//  1. Leftovers: N concurrent RunPodSandbox (bridge + portmap pod network), berthd SIGKILLed a
//     fixed delay after they began, restarted on the same dirs, every listed pod stopped and
//     removed as kubelet does; then the host census of tests/harness (netns, mounts, cgroups,
//     processes, runtime state, addresses, rules, files) is counted, per round. Each round starts
//     on fresh dirs and a fresh network, and what it left is released before the next.
//  2. Restart to serving: with P pods of one running container each, berthd is SIGKILLed and
//     started again; the time from its exec to the first answered Version call.
// BERTHD=<path> runs another build's berthd (a before/after comparison in one program).
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <thread>

#include <CLI/CLI.hpp>

#include "berth/test/cri_client.h"
#include "berth/test/daemon_process.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_leftovers.h"
#include "bench_pods.h"

using namespace berth::test;
namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kParent = "/berth-crash-bench";

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

v1::PodSandboxConfig bench_pod(const std::string& name) {
  v1::PodSandboxConfig c = test_pod(name);
  c.set_log_directory("/tmp/berth-crash-bench-logs/" + name);
  c.mutable_linux()->set_cgroup_parent(kParent);
  auto* port = c.add_port_mappings();
  port->set_container_port(8080);
  port->set_host_port(free_loopback_port());
  return c;
}

// Starts berthd without waiting, then polls Version every millisecond: ms from exec to serving.
double start_and_time(DaemonProcess& d) {
  auto t0 = Clock::now();
  d.start();
  while (ms_since(t0) < 30000) {
    if (!d.running()) return -1;
    if (::access(d.socket().c_str(), F_OK) == 0) {
      // A fresh channel each try: one that failed to connect waits out gRPC's reconnect backoff.
      auto stub = d.runtime();
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
      v1::VersionResponse r;
      if (stub->Version(&ctx, v1::VersionRequest(), &r).ok()) return ms_since(t0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return -1;
}

std::string kind_of(const std::string& line) { return line.substr(0, line.find(": ")); }

void leftover_rounds(int rounds, int pods, int kill_after_ms) {
  std::printf("== leftovers: %d concurrent RunPodSandbox, SIGKILL after %d ms, restart, stop and remove every pod\n",
              pods, kill_after_ms);
  std::map<std::string, int> total;
  int runc_init_total = 0;
  for (int round = 1; round <= rounds; ++round) {
    int runc_init_before = runc_init_processes();
    auto net = std::make_shared<TestNetwork>();
    TempDir dirs("berth-crash-bench");
    std::string root = dirs / "root", state = dirs / "state";
    LeftoverScope scope{root, state, kParent, net.get(), false};
    std::map<std::string, int> counts;
    int listed = 0, runc_init = 0;
    {
      DaemonProcess first({.wait_ready = true, .network = net}, dirs / "a.sock", root, state);
      if (!first.start()) {
        std::fprintf(stderr, "crash-bench: berthd did not start: %s\n", first.log().c_str());
        return;
      }
      CriClient cri(first);
      std::vector<std::future<void>> calls;
      for (int i = 0; i < pods; ++i)
        calls.push_back(std::async(std::launch::async, [&cri, round, i] {
          std::string id;
          (void)cri.run_pod(bench_pod("crash-" + std::to_string(round) + "-" + std::to_string(i)), &id);
        }));
      std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms));
      first.stop(SIGKILL);
      for (auto& c : calls) c.get();
      DaemonProcess second({.wait_ready = true, .network = net}, dirs / "b.sock", root, state);
      if (!second.start()) {
        std::fprintf(stderr, "crash-bench: berthd did not restart: %s\n", second.log().c_str());
        return;
      }
      CriClient again(second);
      for (const auto& p : again.list_pods()) {
        ++listed;
        (void)again.stop_pod(p.id());
        (void)again.remove_pod(p.id());
      }
      // Work a runtime finishes in the background after its restart gets time to end.
      for (int i = 0; i < 300 && second.log().find("recovery: finished") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      second.stop(SIGTERM);
      for (const auto& l : host_leftovers(scope)) {
        if (counts[kind_of(l)]++ < 2) std::printf("  round %d leftover: %s\n", round, l.c_str());
      }
      runc_init = runc_init_processes() - runc_init_before;
    }
    std::printf("round %d: %d pods listed after the restart; left on the host:", round, listed);
    if (counts.empty() && runc_init == 0) std::printf(" nothing");
    for (const auto& [k, n] : counts) std::printf(" %s %d,", k.c_str(), n);
    if (runc_init) std::printf(" runc init %d", runc_init);
    std::printf("\n");
    for (const auto& [k, n] : counts) total[k] += n;
    runc_init_total += runc_init;
    release_host_leftovers(scope);
  }
  std::printf("total over %d rounds:", rounds);
  if (total.empty() && runc_init_total == 0) std::printf(" nothing");
  for (const auto& [k, n] : total) std::printf(" %s %d,", k.c_str(), n);
  if (runc_init_total) std::printf(" runc init %d", runc_init_total);
  std::printf("\n\n");
}

void restart_to_serving(int pods, int restarts) {
  std::printf("== restart to serving with %d pods of one running container each (%d SIGKILL + restart)\n", pods,
              restarts);
  RegistryProcess registry;
  push_test_images(registry.url(), {"--only", "busybox"});
  std::string image = registry.host() + "/test/busybox:latest";
  auto net = std::make_shared<TestNetwork>();
  TempDir dirs("berth-crash-bench");
  std::string root = dirs / "root", state = dirs / "state";
  LeftoverScope scope{root, state, kParent, net.get(), false};
  std::vector<std::unique_ptr<DaemonProcess>> daemons;
  auto next = [&] {
    daemons.push_back(std::make_unique<DaemonProcess>(DaemonOptions{.wait_ready = false, .network = net},
                                                      dirs / ("d" + std::to_string(daemons.size()) + ".sock"), root,
                                                      state));
    return daemons.back().get();
  };
  DaemonProcess* d = next();
  if (start_and_time(*d) < 0) {
    std::fprintf(stderr, "crash-bench: berthd did not start: %s\n", d->log().c_str());
    return;
  }
  {
    CriClient cri(*d);
    if (!cri.pull_image(image).ok()) {
      std::fprintf(stderr, "crash-bench: pull %s failed\n", image.c_str());
      return;
    }
    std::vector<std::future<bool>> made;
    for (int i = 0; i < pods; ++i) {
      made.push_back(std::async(std::launch::async, [&cri, &image, i] {
        v1::PodSandboxConfig config = bench_pod("serve-" + std::to_string(i));
        std::string pod, id;
        return cri.run_pod(config, &pod).ok() &&
               cri.create_container(pod, berth::bench::sleeper_config("c", image), &id, config).ok() &&
               cri.start_container(id).ok();
      }));
      if (made.size() % 4 == 0)  // a few at a time: two cores
        for (size_t j = made.size() - 4; j < made.size(); ++j) made[j].wait();
    }
    int ok = 0;
    for (auto& m : made) ok += m.get();
    std::printf("%d of %d pods running\n", ok, pods);
  }
  std::vector<double> times;
  for (int i = 0; i < restarts; ++i) {
    d->stop(SIGKILL);
    d = next();
    double t = start_and_time(*d);
    times.push_back(t);
    std::string log = d->log();
    size_t at = log.find(" in ", log.find("serving CRI v1"));
    std::printf("restart %d: %.1f ms from exec to the first answered Version (berthd's own log: %s)\n", i + 1, t,
                at == std::string::npos ? "?" : log.substr(at + 4, log.find('\n', at) - at - 4).c_str());
    for (int w = 0; w < 500 && d->log().find("recovery: finished") == std::string::npos; ++w)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::sort(times.begin(), times.end());
  std::printf("restart to serving: median %.1f ms, max %.1f ms\n", times[times.size() / 2], times.back());
  CriClient cri(*d);
  auto listed = cri.list_containers();
  int running = 0;
  for (const auto& c : listed) running += c.state() == v1::CONTAINER_RUNNING;
  std::printf("after the restarts: %d containers listed, %d running\n\n", static_cast<int>(listed.size()), running);
  for (const auto& p : cri.list_pods()) {
    (void)cri.stop_pod(p.id());
    (void)cri.remove_pod(p.id());
  }
  d->stop(SIGTERM);
  release_host_leftovers(scope);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"crash-bench: leftovers after a SIGKILL of berthd, and restart-to-serving time"};
  int rounds = 5, pods = 10, kill_after_ms = 150, serve_pods = 100, restarts = 5;
  app.add_option("--rounds", rounds, "leftover rounds");
  app.add_option("--pods", pods, "concurrent RunPodSandbox calls per round");
  app.add_option("--kill-after-ms", kill_after_ms, "SIGKILL this long after the calls began");
  app.add_option("--serve-pods", serve_pods, "pods (one container each) for the restart measurement; 0: skip it");
  app.add_option("--restarts", restarts, "restarts measured");
  CLI11_PARSE(app, argc, argv);
  std::printf("berthd: %s\n\n", berthd_path().c_str());
  if (rounds > 0) leftover_rounds(rounds, pods, kill_after_ms);
  if (serve_pods > 0) restart_to_serving(serve_pods, restarts);
  return 0;
}
