// node-bench: figures of berth as a node runs it, in the node guest (tests/vm/node-tests runs it
// with BERTH_NODE_BENCH=1, against the packaged berthd under systemd with the systemd cgroup
// driver): pod start (RunPodSandbox + CreateContainer + StartContainer) and stop (StopPodSandbox +
// RemovePodSandbox) with runc and with crun, taken in turns so both see the same machine, and the
// time from `systemctl restart berthd` with 20 pods running until it serves and until every pod
// and container is reported as before. The guest is emulated: the ratios mean something, the
// absolute times little. Prints figures, asserts nothing.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"
#include "bench_figures.h"

namespace {

using namespace berth;
using namespace berth::test;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::shared_ptr<grpc::Channel> node_channel() {
  const char* s = std::getenv("BERTH_NODE_SOCKET");
  return grpc::CreateChannel(std::string("unix:") + (s && *s ? s : "/run/berth/berth.sock"),
                             grpc::InsecureChannelCredentials());
}

struct Pod {
  v1::PodSandboxConfig config;
  std::string id, container;
};

bool start_pod(CriClient& cri, const std::string& name, const std::string& handler, const std::string& image, Pod* p) {
  p->config = test_pod(name);
  p->config.mutable_linux()->set_cgroup_parent("berthbench.slice");
  p->config.set_log_directory("/tmp/berth-node-bench/" + name);
  if (!cri.run_pod(p->config, &p->id, handler).ok()) return false;
  auto c = test_container("sleeper", image, {"sleep", "100000"});
  return cri.create_container(p->id, c, &p->container, p->config).ok() && cri.start_container(p->container).ok();
}

bool stop_pod(CriClient& cri, const Pod& p) { return cri.stop_pod(p.id).ok() && cri.remove_pod(p.id).ok(); }

// Every pod ready and every container running, as they were before the restart.
bool all_back(CriClient& cri, const std::vector<Pod>& pods) {
  auto listed = cri.list_pods();
  size_t ready = 0, running = 0;
  for (const auto& p : listed) ready += p.state() == v1::SANDBOX_READY;
  for (const auto& c : cri.list_containers()) running += c.state() == v1::CONTAINER_RUNNING;
  return ready == pods.size() && running == pods.size();
}

}  // namespace

int main() {
  RegistryProcess registry;
  push_test_images(registry.url(), {"--only", "busybox"});
  const std::string image = registry.host() + "/test/busybox:latest";
  auto channel = node_channel();
  CriClient cri(channel);
  if (!cri.pull_image(image).ok()) {
    std::fprintf(stderr, "node-bench: cannot pull %s through berthd\n", image.c_str());
    return 1;
  }
  constexpr int kRounds = 10;
  const std::vector<std::pair<std::string, std::string>> handlers = {{"runc", ""}, {"crun", "crun"}};
  std::vector<std::vector<double>> start_ms(handlers.size()), stop_ms(handlers.size());
  std::vector<size_t> failures(handlers.size());
  for (int round = 0; round < kRounds; ++round)
    for (size_t h = 0; h < handlers.size(); ++h) {
      Pod p;
      auto t = Clock::now();
      bool ok = start_pod(cri, handlers[h].first + "-" + std::to_string(round), handlers[h].second, image, &p);
      start_ms[h].push_back(ms_since(t));
      t = Clock::now();
      ok = stop_pod(cri, p) && ok;
      stop_ms[h].push_back(ms_since(t));
      failures[h] += !ok;
    }
  bench::print_header();
  std::vector<bench::Figures> start(handlers.size()), stop(handlers.size());
  for (size_t h = 0; h < handlers.size(); ++h) {
    start[h] = bench::figures_of(start_ms[h], failures[h]);
    stop[h] = bench::figures_of(stop_ms[h], failures[h]);
    bench::row("pod start (run+create+start), " + handlers[h].first, start[h]);
    bench::row("pod stop (stop+remove), " + handlers[h].first, stop[h]);
  }
  std::printf("crun / runc, p50: start %.2f, stop %.2f\n", start[1].p50_ms / start[0].p50_ms,
              stop[1].p50_ms / stop[0].p50_ms);

  std::vector<Pod> pods(20);
  for (size_t i = 0; i < pods.size(); ++i)
    if (!start_pod(cri, "restart-" + std::to_string(i), "", image, &pods[i])) {
      std::fprintf(stderr, "node-bench: pod %zu did not start\n", i);
      return 1;
    }
  auto t = Clock::now();
  if (shell("systemctl restart berthd; echo $?") != "0\n") std::fprintf(stderr, "node-bench: restart failed\n");
  double restart_returned = ms_since(t);
  CriClient fresh(node_channel());
  v1::StatusResponse status;
  while (!fresh.status(&status).ok() && ms_since(t) < 120000) usleep(5000);
  double serving = ms_since(t);
  while (!all_back(fresh, pods) && ms_since(t) < 120000) usleep(5000);
  double recovered = ms_since(t);
  std::printf(
      "systemctl restart berthd with %zu pods: systemctl returned %.0f ms, serving %.0f ms, "
      "every pod and container as before %.0f ms\n",
      pods.size(), restart_returned, serving, recovered);
  bench::figure("restart_serving_ms", serving);
  bench::figure("restart_recovered_ms", recovered);
  for (const Pod& p : pods) stop_pod(fresh, p);
  shell("systemctl stop berthbench.slice; rm -rf /tmp/berth-node-bench");
  return 0;
}
