// The table of metrics; names and label keys follow cAdvisor so dashboards keep working.
#include "berth/cadvisor_metrics.h"

namespace berth {

const std::vector<CadvisorMetric>& cadvisor_metrics() {
  using K = MetricKind;
  using S = MetricSource;
  static const std::vector<CadvisorMetric> table = {
      {"container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", K::counter, S::cpu_usage_seconds, false},
      {"container_memory_usage_bytes", "Current memory usage in bytes, including all memory regardless of when it was accessed.", K::gauge, S::memory_usage_bytes, false},
      {"container_memory_working_set_bytes", "Current working set in bytes.", K::gauge, S::memory_working_set_bytes, false},
      {"container_memory_rss", "Size of RSS in bytes.", K::gauge, S::memory_rss_bytes, false},
      {"container_spec_memory_limit_bytes", "Memory limit for the container.", K::gauge, S::memory_limit_bytes, false},
      {"container_processes", "Number of processes running inside the container.", K::gauge, S::processes, false},
      {"container_network_receive_bytes_total", "Cumulative count of bytes received.", K::counter, S::network_receive_bytes, true},
      {"container_network_receive_errors_total", "Cumulative count of errors encountered while receiving.", K::counter, S::network_receive_errors, true},
      {"container_network_transmit_bytes_total", "Cumulative count of bytes transmitted.", K::counter, S::network_transmit_bytes, true},
      {"container_network_transmit_errors_total", "Cumulative count of errors encountered while transmitting.", K::counter, S::network_transmit_errors, true},
  };
  return table;
}

std::vector<std::string> cadvisor_label_keys(const CadvisorMetric& metric) {
  std::vector<std::string> keys = {"container", "id", "image", "name", "namespace", "pod"};
  if (metric.per_interface) keys.push_back("interface");
  return keys;
}

}  // namespace berth
