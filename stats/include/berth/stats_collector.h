// StatsCollector: the CRI stats and metrics of containers and pod sandboxes, assembled from cgroup
// files, the writable layers, the pods' network counters and the managers' in-memory indexes.
// Nothing is exec'd; usage_nano_cores comes from the previous sample of the same object.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "berth/cri_messages.h"
#include "berth/status.h"

namespace berth {

class ContainerManager;
class DiskUsageCache;
class SandboxManager;

class StatsCollector {
 public:
  // `layers_mountpoint` names the filesystem of the writable layers (FilesystemUsage.fs_id);
  // their usage is read from `usage` (kept fresh in the background, so stats calls walk nothing).
  // Cgroup figures are sampled in the background every `sample_period` and calls answer from the
  // last sample (a figure is at most that old, as with cAdvisor's housekeeping); zero: each call
  // reads the cgroup files.
  StatsCollector(ContainerManager& containers, SandboxManager& sandboxes, DiskUsageCache& usage, bool systemd_cgroup,
                 std::string layers_mountpoint, std::chrono::milliseconds sample_period = {});
  ~StatsCollector();

  Result<runtime::v1::ContainerStats> container(const std::string& id_or_prefix);
  std::vector<runtime::v1::ContainerStats> containers(const runtime::v1::ContainerStatsFilter& filter);
  Result<runtime::v1::PodSandboxStats> pod(const std::string& id_or_prefix);
  std::vector<runtime::v1::PodSandboxStats> pods(const runtime::v1::PodSandboxStatsFilter& filter);
  // cAdvisor-named metrics of every ready pod and its containers.
  std::vector<runtime::v1::PodSandboxMetrics> metrics();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth
