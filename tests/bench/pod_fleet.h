// Many pods with one `sleep` container each, started and removed by a pool of client threads, as
// kubelet's pod workers do: what the steady-state and density benchmarks stand on.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "berth/cri_api.h"

namespace berth::bench {

struct FleetOptions {
  std::string image;  // busybox-like: runs `sleep`, has /bin/true
  std::string name;   // pod names are <name>-<i>; each pod's cgroup parent /berth-bench/<name>-<i>
  size_t pods = 0;
  size_t concurrency = 10;
};

struct FleetPod {
  std::string pod_id, container_id;
};

struct Fleet {
  std::vector<FleetPod> pods;               // the ones whose container started, in no particular order
  std::vector<std::string> broken_pod_ids;  // sandboxes whose container did not start
  double start_seconds = 0;                 // wall time to start them all
  size_t failures = 0;
  std::string last_error;
};

bool pull_image(runtime::v1::ImageService::Stub& images, const std::string& image);

// A bench pod named `name`, in namespace berth-bench, with its own cgroup parent
// /berth-bench/<name> (as kubelet's pods have) and its own PID namespace.
runtime::v1::PodSandboxConfig bench_pod_config(const std::string& name);

// RunPodSandbox, then CreateContainer + StartContainer of a `sleep` container of `image` in it;
// `made` gets the ids of what was made. `after_run`, when set, is called as soon as
// RunPodSandbox returned (the lifecycle bench times each step).
grpc::Status start_pod(runtime::v1::RuntimeService::Stub& rt, const runtime::v1::PodSandboxConfig& config,
                       const std::string& image, FleetPod* made,
                       const std::function<void(const grpc::Status&)>& after_run = {});

Fleet start_fleet(runtime::v1::RuntimeService::Stub& rt, const FleetOptions& options);

// StopPodSandbox + RemovePodSandbox of every pod (broken ones too) at `concurrency`, as kubelet
// removes a pod; returns the wall time in seconds.
double remove_fleet(runtime::v1::RuntimeService::Stub& rt, const Fleet& fleet, size_t concurrency);

}  // namespace berth::bench
