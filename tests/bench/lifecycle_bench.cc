// Per-rpc figures of a pod's life; see lifecycle_bench.h. Pods are made and removed one after
// another (no concurrency), so each figure is one rpc's latency on an otherwise idle runtime.
// StopContainer is asked with timeout 0 (`sleep` as PID 1 ignores SIGTERM): the kill, the exit
// report and the state update, without a grace period. Every pod is removed at the end.
#include "lifecycle_bench.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "bench_figures.h"
#include "call_latencies.h"
#include "pod_fleet.h"

namespace berth::bench {

namespace v1 = runtime::v1;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// RunPodSandbox, CreateContainer, StartContainer, each timed, and the three together.
// The pod's own user namespace: container ids 0-65535 from host id `host_base`.
void add_user_namespace(v1::PodSandboxConfig* config, uint32_t host_base) {
  auto* u = config->mutable_linux()->mutable_security_context()->mutable_namespace_options()->mutable_userns_options();
  u->set_mode(v1::POD);
  for (auto* ids : {u->mutable_uids(), u->mutable_gids()}) {
    auto* m = ids->Add();
    m->set_container_id(0);
    m->set_host_id(host_base);
    m->set_length(65536);
  }
}

// `suffix` names the kind of pod in the figures ("" or " userns").
FleetPod make_pod(v1::RuntimeService::Stub& rt, const std::string& image, const v1::PodSandboxConfig& config,
                  const std::string& suffix, CallLatencies& lat, std::string& error) {
  FleetPod pod;
  auto t0 = Clock::now();
  Clock::time_point t1;
  grpc::Status s = start_pod(rt, config, image, &pod, [&](const grpc::Status& run) {
    lat.add("RunPodSandbox" + suffix, ms_since(t0), run.ok());
    t1 = Clock::now();
  });
  if (!pod.pod_id.empty()) {
    lat.add("CreateContainer+StartContainer" + suffix, ms_since(t1), s.ok());
    lat.add("RunPodSandbox+CreateContainer+StartContainer" + suffix, ms_since(t0), s.ok());
  }
  if (!s.ok()) error = s.error_message();
  return pod;
}

bool exec_true(v1::RuntimeService::Stub& rt, const std::string& container_id) {
  grpc::ClientContext ctx;
  v1::ExecSyncRequest req;
  req.set_container_id(container_id);
  req.add_cmd("/bin/true");
  req.set_timeout(10);
  v1::ExecSyncResponse r;
  return rt.ExecSync(&ctx, req, &r).ok() && r.exit_code() == 0;
}

bool remove_container(v1::RuntimeService::Stub& rt, const std::string& id) {
  grpc::ClientContext ctx;
  v1::RemoveContainerRequest req;
  req.set_container_id(id);
  v1::RemoveContainerResponse r;
  return rt.RemoveContainer(&ctx, req, &r).ok();
}

// Kubelet's order: a pod's deletion stops its containers, then the sandbox; the garbage collector
// removes the containers, then the sandbox, once they are stopped. With `remove_at_once` the
// container is removed right after its stop instead, as `crictl rm -f` does and kubelet does with
// a dead container it no longer needs ("RemoveContainer after StopContainer").
void take_down(v1::RuntimeService::Stub& rt, const FleetPod& pod, CallLatencies& lat, const std::string& suffix,
               bool remove_at_once) {
  // What `crictl inspectp` asks for, once per pod before it goes.
  lat.time("PodSandboxStatus verbose" + suffix, [&] {
    grpc::ClientContext ctx;
    v1::PodSandboxStatusRequest req;
    req.set_pod_sandbox_id(pod.pod_id);
    req.set_verbose(true);
    v1::PodSandboxStatusResponse r;
    return rt.PodSandboxStatus(&ctx, req, &r).ok();
  });
  if (!pod.container_id.empty()) {
    lat.time("StopContainer" + suffix, [&] {
      grpc::ClientContext ctx;
      v1::StopContainerRequest req;
      req.set_container_id(pod.container_id);
      req.set_timeout(0);
      v1::StopContainerResponse r;
      return rt.StopContainer(&ctx, req, &r).ok();
    });
    if (remove_at_once)
      lat.time("RemoveContainer after StopContainer" + suffix, [&] { return remove_container(rt, pod.container_id); });
  }
  lat.time("StopPodSandbox" + suffix, [&] {
    grpc::ClientContext ctx;
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(pod.pod_id);
    v1::StopPodSandboxResponse r;
    return rt.StopPodSandbox(&ctx, req, &r).ok();
  });
  if (!pod.container_id.empty() && !remove_at_once)
    lat.time("RemoveContainer" + suffix, [&] { return remove_container(rt, pod.container_id); });
  lat.time("RemovePodSandbox" + suffix, [&] {
    grpc::ClientContext ctx;
    v1::RemovePodSandboxRequest req;
    req.set_pod_sandbox_id(pod.pod_id);
    v1::RemovePodSandboxResponse r;
    return rt.RemovePodSandbox(&ctx, req, &r).ok();
  });
}

}  // namespace

void run_lifecycle_bench(v1::RuntimeService::Stub& rt, v1::ImageService::Stub& images, const RuntimeProcs& procs,
                         const LifecycleBenchOptions& o) {
  if (!pull_image(images, o.image)) return;
  CallLatencies lat;
  std::string error;
  RuntimeSample before = procs.sample();
  std::vector<FleetPod> pods;
  std::vector<FleetPod> userns_pods;
  for (size_t i = 0; i < o.pods; ++i) {
    FleetPod pod = make_pod(rt, o.image, bench_pod_config("life-" + std::to_string(i)), "", lat, error);
    if (!pod.pod_id.empty()) pods.push_back(pod);
    if (o.userns_host_base == 0) continue;
    v1::PodSandboxConfig config = bench_pod_config("life-userns-" + std::to_string(i));
    add_user_namespace(&config, o.userns_host_base + static_cast<uint32_t>(i) * 65536u);
    FleetPod userns = make_pod(rt, o.image, config, " userns", lat, error);
    if (!userns.pod_id.empty()) userns_pods.push_back(userns);
  }
  RuntimeSample with_pods = procs.sample();
  for (size_t round = 0; round < o.execs_per_pod; ++round)
    for (const auto& pod : pods)
      if (!pod.container_id.empty()) lat.time("ExecSync", [&] { return exec_true(rt, pod.container_id); });
  // Every other pod's container is removed right after its stop.
  for (size_t i = 0; i < pods.size(); ++i) take_down(rt, pods[i], lat, "", i % 2 == 1);
  for (const auto& pod : userns_pods) take_down(rt, pod, lat, " userns", false);

  std::printf("\npod lifecycle, %zu pods one after another (CNI bridge), %zu ExecSync each", o.pods, o.execs_per_pod);
  if (o.userns_host_base != 0) std::printf(", each followed by one with a user namespace of its own (\"... userns\")");
  std::printf(":\n");
  lat.print("lifecycle");
  if (procs.enabled() && !pods.empty()) {
    print_runtime_memory("before the pods", before);
    print_runtime_memory(("with " + std::to_string(pods.size() + userns_pods.size()) + " pods").c_str(), with_pods);
    PerPodMib per_pod = memory_per_pod(before, with_pods, pods.size() + userns_pods.size());
    std::printf("runtime memory per pod (daemon + helpers, growth / pods): RSS %.2f MiB, Pss %.2f MiB\n", per_pod.rss,
                per_pod.pss);
    figure("lifecycle.per_pod_rss_mib", per_pod.rss);
    figure("lifecycle.per_pod_pss_mib", per_pod.pss);
  }
  if (!error.empty()) std::printf("last error: %s\n", error.c_str());
}

}  // namespace berth::bench
