// start_fleet / remove_fleet; see pod_fleet.h. A pod counts as started once RunPodSandbox,
// CreateContainer and StartContainer all succeeded; a half-made pod is still removed at the end.
#include "pod_fleet.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>

#include "bench_pods.h"

namespace berth::bench {

namespace v1 = runtime::v1;

namespace {

using Clock = std::chrono::steady_clock;

// Runs work(i) for i in [0, n) on `threads` threads.
void parallel_for(size_t n, size_t threads, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t t = 0; t < std::max<size_t>(1, threads); ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < n;) work(i);
    });
  for (auto& t : pool) t.join();
}

}  // namespace

v1::PodSandboxConfig bench_pod_config(const std::string& name) {
  v1::PodSandboxConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_namespace_("berth-bench");
  c.mutable_metadata()->set_uid("bench-" + name);
  c.set_hostname(name);
  c.mutable_linux()->set_cgroup_parent("/berth-bench/" + name);
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  return c;
}

grpc::Status start_pod(v1::RuntimeService::Stub& rt, const v1::PodSandboxConfig& config, const std::string& image,
                       FleetPod* made, const std::function<void(const grpc::Status&)>& after_run) {
  grpc::Status s;
  {
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = config;
    v1::RunPodSandboxResponse r;
    s = rt.RunPodSandbox(&ctx, req, &r);
    made->pod_id = r.pod_sandbox_id();
  }
  if (after_run) after_run(s);
  if (s.ok()) {
    grpc::ClientContext ctx;
    v1::CreateContainerRequest req;
    req.set_pod_sandbox_id(made->pod_id);
    *req.mutable_config() = sleeper_config("sleeper", image);
    // kubelet repeats the pod's user namespace on each of its containers.
    const auto& pod_ns = config.linux().security_context().namespace_options();
    if (pod_ns.has_userns_options())
      *req.mutable_config()
           ->mutable_linux()
           ->mutable_security_context()
           ->mutable_namespace_options()
           ->mutable_userns_options() = pod_ns.userns_options();
    *req.mutable_sandbox_config() = config;
    v1::CreateContainerResponse r;
    s = rt.CreateContainer(&ctx, req, &r);
    made->container_id = r.container_id();
  }
  if (s.ok()) {
    grpc::ClientContext ctx;
    v1::StartContainerRequest req;
    req.set_container_id(made->container_id);
    v1::StartContainerResponse r;
    s = rt.StartContainer(&ctx, req, &r);
  }
  return s;
}

bool pull_image(v1::ImageService::Stub& images, const std::string& image) {
  grpc::ClientContext ctx;
  v1::PullImageRequest req;
  req.mutable_image()->set_image(image);
  v1::PullImageResponse r;
  grpc::Status s = images.PullImage(&ctx, req, &r);
  if (!s.ok()) std::printf("cannot pull %s: %s\n", image.c_str(), s.error_message().c_str());
  return s.ok();
}

Fleet start_fleet(v1::RuntimeService::Stub& rt, const FleetOptions& o) {
  Fleet fleet;
  std::mutex mu;
  auto t0 = Clock::now();
  parallel_for(o.pods, o.concurrency, [&](size_t i) {
    FleetPod made;
    grpc::Status s = start_pod(rt, bench_pod_config(o.name + "-" + std::to_string(i)), o.image, &made);
    std::lock_guard lock(mu);
    if (s.ok())
      fleet.pods.push_back(made);
    else if (!made.pod_id.empty())
      fleet.broken_pod_ids.push_back(made.pod_id);
    if (!s.ok()) {
      ++fleet.failures;
      fleet.last_error = s.error_message();
    }
  });
  fleet.start_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return fleet;
}

double remove_fleet(v1::RuntimeService::Stub& rt, const Fleet& fleet, size_t concurrency) {
  std::vector<std::string> ids = fleet.broken_pod_ids;
  for (const auto& p : fleet.pods) ids.push_back(p.pod_id);
  auto t0 = Clock::now();
  parallel_for(ids.size(), concurrency, [&](size_t i) {
    grpc::ClientContext ctx;
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(ids[i]);
    v1::StopPodSandboxResponse r;
    (void)rt.StopPodSandbox(&ctx, req, &r);
    remove_pods(rt, {ids[i]});
  });
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace berth::bench
