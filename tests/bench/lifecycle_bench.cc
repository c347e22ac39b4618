// Per-rpc figures of a pod's life; see lifecycle_bench.h. Pods are made and removed one after
// another (no concurrency), so each figure is one rpc's latency on an otherwise idle runtime.
// StopContainer is asked with timeout 0 (`sleep` as PID 1 ignores SIGTERM): the kill, the exit
// report and the state update, without a grace period. Every pod is removed at the end.
#include "lifecycle_bench.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "bench_figures.h"
#include "bench_pods.h"
#include "call_latencies.h"
#include "pod_fleet.h"

namespace berth::bench {

namespace v1 = runtime::v1;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

v1::PodSandboxConfig lifecycle_pod(size_t i) {
  v1::PodSandboxConfig c;
  std::string name = "life-" + std::to_string(i);
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_namespace_("berth-bench");
  c.mutable_metadata()->set_uid("bench-" + name);
  c.set_hostname(name);
  c.mutable_linux()->set_cgroup_parent("/berth-bench/" + name);
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  return c;
}

struct Pod {
  std::string pod_id, container_id;
};

// RunPodSandbox, CreateContainer, StartContainer, each timed, and the three together.
Pod make_pod(v1::RuntimeService::Stub& rt, const std::string& image, size_t i, CallLatencies& lat, std::string& error) {
  Pod pod;
  v1::PodSandboxConfig config = lifecycle_pod(i);
  auto t0 = Clock::now();
  grpc::Status s;
  {
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = config;
    v1::RunPodSandboxResponse r;
    s = rt.RunPodSandbox(&ctx, req, &r);
    pod.pod_id = r.pod_sandbox_id();
  }
  double run_ms = ms_since(t0);
  lat.add("RunPodSandbox", run_ms, s.ok());
  auto t1 = Clock::now();
  if (s.ok()) {
    grpc::ClientContext ctx;
    v1::CreateContainerRequest req;
    req.set_pod_sandbox_id(pod.pod_id);
    *req.mutable_config() = sleeper_config("sleeper", image);
    *req.mutable_sandbox_config() = config;
    v1::CreateContainerResponse r;
    s = rt.CreateContainer(&ctx, req, &r);
    pod.container_id = r.container_id();
  }
  if (s.ok()) {
    grpc::ClientContext ctx;
    v1::StartContainerRequest req;
    req.set_container_id(pod.container_id);
    v1::StartContainerResponse r;
    s = rt.StartContainer(&ctx, req, &r);
  }
  if (!pod.pod_id.empty()) {
    lat.add("CreateContainer+StartContainer", ms_since(t1), s.ok());
    lat.add("RunPodSandbox+CreateContainer+StartContainer", ms_since(t0), s.ok());
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

// Kubelet's order: the container, then the sandbox.
void take_down(v1::RuntimeService::Stub& rt, const Pod& pod, CallLatencies& lat) {
  if (!pod.container_id.empty()) {
    lat.time("StopContainer", [&] {
      grpc::ClientContext ctx;
      v1::StopContainerRequest req;
      req.set_container_id(pod.container_id);
      req.set_timeout(0);
      v1::StopContainerResponse r;
      return rt.StopContainer(&ctx, req, &r).ok();
    });
    lat.time("RemoveContainer", [&] {
      grpc::ClientContext ctx;
      v1::RemoveContainerRequest req;
      req.set_container_id(pod.container_id);
      v1::RemoveContainerResponse r;
      return rt.RemoveContainer(&ctx, req, &r).ok();
    });
  }
  lat.time("StopPodSandbox", [&] {
    grpc::ClientContext ctx;
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(pod.pod_id);
    v1::StopPodSandboxResponse r;
    return rt.StopPodSandbox(&ctx, req, &r).ok();
  });
  lat.time("RemovePodSandbox", [&] {
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
  std::vector<Pod> pods;
  for (size_t i = 0; i < o.pods; ++i) {
    Pod pod = make_pod(rt, o.image, i, lat, error);
    if (!pod.pod_id.empty()) pods.push_back(pod);
  }
  RuntimeSample with_pods = procs.sample();
  for (size_t round = 0; round < o.execs_per_pod; ++round)
    for (const auto& pod : pods)
      if (!pod.container_id.empty()) lat.time("ExecSync", [&] { return exec_true(rt, pod.container_id); });
  for (const auto& pod : pods) take_down(rt, pod, lat);

  std::printf("\npod lifecycle, %zu pods one after another (CNI bridge), %zu ExecSync each:\n", o.pods, o.execs_per_pod);
  lat.print("lifecycle");
  if (procs.enabled() && !pods.empty()) {
    print_runtime_memory("before the pods", before);
    print_runtime_memory(("with " + std::to_string(pods.size()) + " pods").c_str(), with_pods);
    PerPodMib per_pod = memory_per_pod(before, with_pods, pods.size());
    std::printf("runtime memory per pod (daemon + helpers, growth / pods): RSS %.2f MiB, Pss %.2f MiB\n",
                per_pod.rss, per_pod.pss);
    figure("lifecycle.per_pod_rss_mib", per_pod.rss);
    figure("lifecycle.per_pod_pss_mib", per_pod.pss);
  }
  if (!error.empty()) std::printf("last error: %s\n", error.c_str());
}

}  // namespace berth::bench
