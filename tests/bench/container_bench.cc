// Container figures; see container_bench.h. Every pod and container it makes is removed at the end.
#include "container_bench.h"

#include <dirent.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "bench_figures.h"
#include "bench_pods.h"

namespace berth::bench {

namespace v1 = runtime::v1;

namespace {

// RSS of every berth-monitor process whose command line names one of `ids`.
std::vector<long> monitor_rss_kib(const std::vector<std::string>& ids) {
  std::vector<long> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name != "berth-monitor") continue;
    std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
    std::stringstream ss;
    ss << cmd.rdbuf();
    std::string args = ss.str();
    for (const auto& id : ids) {
      if (args.find(id) != std::string::npos) {
        if (long k = rss_kib(pid); k > 0) out.push_back(k);
        break;
      }
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace

void run_container_bench(v1::RuntimeService::Stub& rt, v1::ImageService::Stub& images, const ContainerBenchOptions& o) {
  {
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(o.image);
    v1::PullImageResponse r;
    grpc::Status s = images.PullImage(&ctx, req, &r);
    if (!s.ok()) {
      std::printf("container bench: cannot pull %s: %s\n", o.image.c_str(), s.error_message().c_str());
      return;
    }
  }
  v1::PodSandboxConfig pod;
  pod.mutable_metadata()->set_name("bench-containers");
  pod.mutable_metadata()->set_namespace_("berth-bench");
  pod.mutable_metadata()->set_uid("bench-containers");
  pod.mutable_linux()->set_cgroup_parent("/berth-bench");
  pod.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  std::string pod_id;
  {
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = pod;
    v1::RunPodSandboxResponse r;
    grpc::Status s = rt.RunPodSandbox(&ctx, req, &r);
    if (!s.ok()) {
      std::printf("container bench: RunPodSandbox: %s\n", s.error_message().c_str());
      return;
    }
    pod_id = r.pod_sandbox_id();
  }
  std::vector<std::string> ids;
  std::string last_error;
  auto create_start = [&](int i) {
    v1::ContainerConfig c = sleeper_config("c" + std::to_string(i), o.image);
    grpc::ClientContext cctx;
    v1::CreateContainerRequest creq;
    creq.set_pod_sandbox_id(pod_id);
    *creq.mutable_config() = c;
    *creq.mutable_sandbox_config() = pod;
    v1::CreateContainerResponse cr;
    grpc::Status s = rt.CreateContainer(&cctx, creq, &cr);
    if (s.ok()) {
      ids.push_back(cr.container_id());
      grpc::ClientContext sctx;
      v1::StartContainerRequest sreq;
      sreq.set_container_id(cr.container_id());
      v1::StartContainerResponse sr;
      s = rt.StartContainer(&sctx, sreq, &sr);
    }
    if (!s.ok()) last_error = s.error_message();
    return s.ok();
  };
  int n = 0;
  Figures cs = measure(20, [&] { return create_start(n++); });
  row("CreateContainer + StartContainer", cs);
  while (ids.size() < 100 && create_start(n++)) {
  }
  Figures lc = measure(100, [&] {
    grpc::ClientContext ctx;
    v1::ListContainersResponse r;
    return rt.ListContainers(&ctx, v1::ListContainersRequest(), &r).ok() &&
           r.containers_size() == static_cast<int>(ids.size());
  });
  row("ListContainers, " + std::to_string(ids.size()) + " containers", lc);
  Figures lp = measure(100, [&] {
    grpc::ClientContext ctx;
    v1::ListPodSandboxResponse r;
    return rt.ListPodSandbox(&ctx, v1::ListPodSandboxRequest(), &r).ok();
  });
  row("ListPodSandbox, with them", lp);
  std::vector<long> monitors = monitor_rss_kib(ids);
  long total = 0;
  for (long k : monitors) total += k;
  std::printf("\nCreateContainer + StartContainer: p50 %.1f ms, p95 %.1f ms over 20\n", cs.p50_ms, cs.p95_ms);
  std::printf("ListContainers with %zu containers: median %.3f ms; ListPodSandbox: median %.3f ms (100 calls each)\n",
              ids.size(), lc.p50_ms, lp.p50_ms);
  if (!monitors.empty())
    std::printf("berth-monitor: %zu processes, %.0f KiB RSS on average\n", monitors.size(),
                static_cast<double>(total) / monitors.size());
  if (o.runtime_pid > 0)
    std::printf("runtime RSS with %zu containers: %.1f MiB\n", ids.size(), rss_kib(o.runtime_pid) / 1024.0);
  if (!last_error.empty()) std::printf("last error: %s\n", last_error.c_str());
  remove_pods(rt, {pod_id});
}

}  // namespace berth::bench
