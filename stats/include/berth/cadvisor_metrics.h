// The cAdvisor-named metrics berth produces for ListMetricDescriptors and ListPodSandboxMetrics
// (kubelet's /metrics/cadvisor when it takes metrics from the runtime), each computed from the
// same cgroup and network readings as the stats rpcs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "berth/cgroup_stats.h"

namespace berth {

enum class MetricKind { counter, gauge };

enum class MetricSource {
  cpu_usage_seconds,
  memory_usage_bytes,
  memory_working_set_bytes,
  memory_rss_bytes,
  memory_limit_bytes,
  processes,
  network_receive_bytes,
  network_receive_errors,
  network_transmit_bytes,
  network_transmit_errors,
  fs_read_bytes,
  fs_write_bytes,
  fs_reads,
  fs_writes,
  cpu_pressure_waiting,  // PSI "some"
  cpu_pressure_stalled,  // PSI "full"
  memory_pressure_waiting,
  memory_pressure_stalled,
  io_pressure_waiting,
  io_pressure_stalled,
};

struct CadvisorMetric {
  const char* name;
  const char* help;
  MetricKind kind;
  MetricSource source;
  bool per_interface;  // network metrics carry an extra "interface" label
};

const std::vector<CadvisorMetric>& cadvisor_metrics();

// cAdvisor's label keys, in order: container, id, image, name, namespace, pod (+ interface).
std::vector<std::string> cadvisor_label_keys(const CadvisorMetric& metric);

// The value of a block IO or pressure metric from a container's sample (PSI stall time in whole
// seconds: Metric values are integers); nullopt when the kernel gave no such figure, so no sample
// is reported rather than a zero, and for the metrics computed elsewhere.
std::optional<uint64_t> cgroup_metric_value(MetricSource source, const CgroupSample& s);

}  // namespace berth
