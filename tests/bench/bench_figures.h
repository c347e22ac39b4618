// What every berth-bench measurement shares: timing a call n times into percentiles, one table
// row per figure, and a process's RSS read from /proc.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace berth::bench {

struct Figures {
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, mean_ms = 0;
  size_t n = 0, failures = 0;
};

// Runs `call` n times, one after another; a call that returns false counts as a failure.
Figures measure(size_t n, const std::function<bool()>& call);
// Percentiles of durations already taken (`ms` is sorted in place).
Figures figures_of(std::vector<double>& ms, size_t failures);

void print_header();
void row(const std::string& what, const Figures& f);
// A line for scripts that compare runtimes (side-by-side.sh): "figure<TAB>key<TAB>value".
void figure(const std::string& key, double value);

long rss_kib(int pid);         // VmRSS, -1 when the process is gone
long peak_rss_kib(int pid);    // VmHWM
void reset_peak_rss(int pid);  // writing 5 to clear_refs restarts VmHWM

// The body of an HTTP GET (curl), e.g. a Prometheus /metrics page; empty on failure.
std::string http_get(const std::string& url);
// The sum of every sample of `metric` (e.g. "berth_cni_plugin_duration_seconds_sum") whose labels
// contain `label_filter` (e.g. "command=\"ADD\""), from Prometheus text.
double metric_sum(const std::string& text, const std::string& metric, const std::string& label_filter = "");

}  // namespace berth::bench
