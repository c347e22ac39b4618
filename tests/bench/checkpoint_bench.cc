// Checkpoint/restore figures; see checkpoint_bench.h.
#include "checkpoint_bench.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <algorithm>
#include <vector>

#include "bench_figures.h"
#include "bench_pods.h"

namespace berth::bench {

namespace v1 = runtime::v1;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t working_set(v1::RuntimeService::Stub& rt, const std::string& id) {
  grpc::ClientContext ctx;
  v1::ContainerStatsRequest req;
  req.set_container_id(id);
  v1::ContainerStatsResponse r;
  if (!rt.ContainerStats(&ctx, req, &r).ok()) return 0;
  return r.stats().memory().working_set_bytes().value();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void run_checkpoint_bench(v1::RuntimeService::Stub& rt, v1::ImageService::Stub& images,
                          const CheckpointBenchOptions& o) {
  {
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(o.image);
    v1::PullImageResponse r;
    if (grpc::Status s = images.PullImage(&ctx, req, &r); !s.ok()) {
      std::printf("checkpoint bench: cannot pull %s: %s\n", o.image.c_str(), s.error_message().c_str());
      return;
    }
  }
  v1::PodSandboxConfig pod;
  pod.mutable_metadata()->set_name("bench-checkpoint");
  pod.mutable_metadata()->set_namespace_("berth-bench");
  pod.mutable_metadata()->set_uid("bench-checkpoint");
  pod.mutable_linux()->set_cgroup_parent("/berth-bench");
  pod.set_log_directory(o.dir + "/logs");
  std::string pod_id;
  {
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = pod;
    v1::RunPodSandboxResponse r;
    if (grpc::Status s = rt.RunPodSandbox(&ctx, req, &r); !s.ok()) {
      std::printf("checkpoint bench: RunPodSandbox: %s\n", s.error_message().c_str());
      return;
    }
    pod_id = r.pod_sandbox_id();
  }
  auto create_start = [&](const std::string& name, const std::string& image, double* create_ms, double* start_ms) {
    v1::ContainerConfig c = sleeper_config(name, image);
    c.clear_command();
    c.clear_args();
    c.add_command("/bin/sh");
    c.add_args("-c");
    // A string of `mib` MiB of spaces: touched memory the dump must copy, held by a process
    // that then only sleeps.
    c.add_args(
        "busybox awk -v n=" + std::to_string(o.mib << 20) +
        " 'BEGIN { s = sprintf(\"%\" n \"s\", \"\"); print \"ready\"; fflush(); while (1) system(\"sleep 1\") }'");
    c.set_log_path(name + ".log");
    std::string id;
    auto t = Clock::now();
    {
      grpc::ClientContext ctx;
      v1::CreateContainerRequest req;
      req.set_pod_sandbox_id(pod_id);
      *req.mutable_config() = c;
      *req.mutable_sandbox_config() = pod;
      v1::CreateContainerResponse r;
      if (grpc::Status s = rt.CreateContainer(&ctx, req, &r); !s.ok()) {
        std::printf("checkpoint bench: CreateContainer %s: %s\n", name.c_str(), s.error_message().c_str());
        return id;
      }
      id = r.container_id();
    }
    if (create_ms) *create_ms = ms_since(t);
    t = Clock::now();
    grpc::ClientContext ctx;
    v1::StartContainerRequest req;
    req.set_container_id(id);
    v1::StartContainerResponse r;
    if (grpc::Status s = rt.StartContainer(&ctx, req, &r); !s.ok()) {
      std::printf("checkpoint bench: StartContainer %s: %s\n", name.c_str(), s.error_message().c_str());
      return std::string();
    }
    if (start_ms) *start_ms = ms_since(t);
    return id;
  };
  auto remove = [&](const std::string& id) {
    grpc::ClientContext ctx;
    v1::RemoveContainerRequest req;
    req.set_container_id(id);
    v1::RemoveContainerResponse r;
    (void)rt.RemoveContainer(&ctx, req, &r);
  };

  std::string id = create_start("holder", o.image, nullptr, nullptr);
  const auto deadline = Clock::now() + std::chrono::minutes(5);
  while (!id.empty() && read_all(o.dir + "/logs/holder.log").find("ready") == std::string::npos &&
         Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::printf("checkpoint/restore: container of %d MiB touched memory (working set %.1f MiB)\n", o.mib,
              static_cast<double>(working_set(rt, id)) / (1 << 20));
  std::vector<double> dump_ms, size_mib, create_ms, start_ms, restored_mib;
  for (int i = 0; i < o.runs && !id.empty(); ++i) {
    const std::string archive = o.dir + "/checkpoint-" + std::to_string(i) + ".tar";
    auto t = Clock::now();
    grpc::ClientContext ctx;
    v1::CheckpointContainerRequest req;
    req.set_container_id(id);
    req.set_location(archive);
    req.set_timeout(1800);
    v1::CheckpointContainerResponse r;
    if (grpc::Status s = rt.CheckpointContainer(&ctx, req, &r); !s.ok()) {
      std::printf("checkpoint bench: CheckpointContainer: %s\n", s.error_message().c_str());
      break;
    }
    dump_ms.push_back(ms_since(t));
    struct stat st {};
    ::stat(archive.c_str(), &st);
    size_mib.push_back(static_cast<double>(st.st_size) / (1 << 20));
    double c = 0, s = 0;
    std::string restored = create_start("restored-" + std::to_string(i), archive, &c, &s);
    if (restored.empty()) break;
    create_ms.push_back(c);
    start_ms.push_back(s);
    // Stats come from berthd's periodic collection: the restored container's first sample.
    uint64_t ws = 0;
    for (auto until = Clock::now() + std::chrono::seconds(30); Clock::now() < until;) {
      if ((ws = working_set(rt, restored)) > (static_cast<uint64_t>(o.mib) << 20) / 2) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    restored_mib.push_back(static_cast<double>(ws) / (1 << 20));
    remove(restored);
    ::unlink(archive.c_str());
  }
  figure("checkpoint.CheckpointContainer.p50_ms", median(dump_ms));
  figure("checkpoint.archive_mib", median(size_mib));
  figure("restore.CreateContainer.p50_ms", median(create_ms));
  figure("restore.StartContainer.p50_ms", median(start_ms));
  std::vector<double> total;
  for (size_t i = 0; i < create_ms.size(); ++i) total.push_back(create_ms[i] + start_ms[i]);
  figure("restore.Create+Start.p50_ms", median(total));
  figure("restore.working_set_mib", median(restored_mib));
  figure("checkpoint.runs", static_cast<double>(dump_ms.size()));
  if (!id.empty()) remove(id);
  remove_pods(rt, {pod_id});
}

}  // namespace berth::bench
