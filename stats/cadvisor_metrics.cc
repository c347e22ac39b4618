// The table of metrics; names and label keys follow cAdvisor so dashboards keep working.
#include "berth/cadvisor_metrics.h"

namespace berth {

const std::vector<CadvisorMetric>& cadvisor_metrics() {
  using K = MetricKind;
  using S = MetricSource;
  static const std::vector<CadvisorMetric> table = {
      {"container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", K::counter,
       S::cpu_usage_seconds, false},
      {"container_memory_usage_bytes",
       "Current memory usage in bytes, including all memory regardless of when it was accessed.", K::gauge,
       S::memory_usage_bytes, false},
      {"container_memory_working_set_bytes", "Current working set in bytes.", K::gauge, S::memory_working_set_bytes,
       false},
      {"container_memory_rss", "Size of RSS in bytes.", K::gauge, S::memory_rss_bytes, false},
      {"container_spec_memory_limit_bytes", "Memory limit for the container.", K::gauge, S::memory_limit_bytes, false},
      {"container_processes", "Number of processes running inside the container.", K::gauge, S::processes, false},
      {"container_network_receive_bytes_total", "Cumulative count of bytes received.", K::counter,
       S::network_receive_bytes, true},
      {"container_network_receive_errors_total", "Cumulative count of errors encountered while receiving.", K::counter,
       S::network_receive_errors, true},
      {"container_network_transmit_bytes_total", "Cumulative count of bytes transmitted.", K::counter,
       S::network_transmit_bytes, true},
      {"container_network_transmit_errors_total", "Cumulative count of errors encountered while transmitting.",
       K::counter, S::network_transmit_errors, true},
      {"container_fs_reads_bytes_total", "Cumulative count of bytes read from block devices.", K::counter,
       S::fs_read_bytes, false},
      {"container_fs_writes_bytes_total", "Cumulative count of bytes written to block devices.", K::counter,
       S::fs_write_bytes, false},
      {"container_fs_reads_total", "Cumulative count of block device reads completed.", K::counter, S::fs_reads, false},
      {"container_fs_writes_total", "Cumulative count of block device writes completed.", K::counter, S::fs_writes,
       false},
      {"container_pressure_cpu_waiting_seconds_total",
       "Total time in seconds some tasks of the container waited for cpu (PSI some).", K::counter,
       S::cpu_pressure_waiting, false},
      {"container_pressure_cpu_stalled_seconds_total",
       "Total time in seconds no task of the container could run for want of cpu (PSI full).", K::counter,
       S::cpu_pressure_stalled, false},
      {"container_pressure_memory_waiting_seconds_total",
       "Total time in seconds some tasks of the container waited for memory (PSI some).", K::counter,
       S::memory_pressure_waiting, false},
      {"container_pressure_memory_stalled_seconds_total",
       "Total time in seconds no task of the container could run for want of memory (PSI full).", K::counter,
       S::memory_pressure_stalled, false},
      {"container_pressure_io_waiting_seconds_total",
       "Total time in seconds some tasks of the container waited for block IO (PSI some).", K::counter,
       S::io_pressure_waiting, false},
      {"container_pressure_io_stalled_seconds_total",
       "Total time in seconds no task of the container could run for want of block IO (PSI full).", K::counter,
       S::io_pressure_stalled, false},
  };
  return table;
}

std::vector<std::string> cadvisor_label_keys(const CadvisorMetric& metric) {
  std::vector<std::string> keys = {"container", "id", "image", "name", "namespace", "pod"};
  if (metric.per_interface) keys.push_back("interface");
  return keys;
}

static std::optional<uint64_t> stall_seconds(const std::optional<Pressure>& p, bool full) {
  if (!p) return std::nullopt;
  const auto& line = full ? p->full : p->some;
  if (!line) return std::nullopt;
  return line->total_us / 1'000'000;  // the kernel counts microseconds
}

std::optional<uint64_t> cgroup_metric_value(MetricSource source, const CgroupSample& s) {
  using S = MetricSource;
  switch (source) {
    case S::fs_read_bytes: return s.io ? std::optional(s.io->read_bytes) : std::nullopt;
    case S::fs_write_bytes: return s.io ? std::optional(s.io->write_bytes) : std::nullopt;
    case S::fs_reads: return s.io ? std::optional(s.io->reads) : std::nullopt;
    case S::fs_writes: return s.io ? std::optional(s.io->writes) : std::nullopt;
    case S::cpu_pressure_waiting: return stall_seconds(s.cpu_pressure, false);
    case S::cpu_pressure_stalled: return stall_seconds(s.cpu_pressure, true);
    case S::memory_pressure_waiting: return stall_seconds(s.memory_pressure, false);
    case S::memory_pressure_stalled: return stall_seconds(s.memory_pressure, true);
    case S::io_pressure_waiting: return stall_seconds(s.io_pressure, false);
    case S::io_pressure_stalled: return stall_seconds(s.io_pressure, true);
    default: return std::nullopt;
  }
}

}  // namespace berth
