// The cAdvisor-named metrics berth produces for ListMetricDescriptors and ListPodSandboxMetrics
// (kubelet's /metrics/cadvisor when it takes metrics from the runtime), each computed from the
// same cgroup and network readings as the stats rpcs.
#pragma once

#include <string>
#include <vector>

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

}  // namespace berth
