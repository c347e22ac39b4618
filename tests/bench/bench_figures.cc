// Timing, table rows, /proc readings and a metrics scrape for berth-bench.
#include "bench_figures.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace berth::bench {

using Clock = std::chrono::steady_clock;

Figures measure(size_t n, const std::function<bool()>& call) {
  std::vector<double> ms;
  ms.reserve(n);
  size_t failures = 0;
  for (size_t i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    if (!call()) ++failures;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return figures_of(ms, failures);
}

Figures figures_of(std::vector<double>& ms, size_t failures) {
  if (ms.empty()) return {};
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  auto pct = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))]; };
  return {pct(0.50), pct(0.95), pct(0.99), sum / ms.size(), ms.size(), failures};
}

void print_header() {
  std::printf("| %-40s | %6s | %9s | %9s | %9s | %9s | %8s |\n", "measurement", "calls", "p50 ms", "p95 ms", "p99 ms",
              "mean ms", "failures");
  std::printf(
      "|------------------------------------------|--------|-----------|-----------|-----------|-----------|----------|"
      "\n");
}

void row(const std::string& what, const Figures& f) {
  std::printf("| %-40s | %6zu | %9.3f | %9.3f | %9.3f | %9.3f | %8zu |\n", what.c_str(), f.n, f.p50_ms, f.p95_ms,
              f.p99_ms, f.mean_ms, f.failures);
}

void figure(const std::string& key, double value) { std::printf("figure\t%s\t%.3f\n", key.c_str(), value); }

static long status_field_kib(int pid, const char* field) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  std::string fmt = std::string(field) + ": %ld kB";
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, fmt.c_str(), &kib) == 1) break;
  std::fclose(f);
  return kib;
}

long rss_kib(int pid) { return status_field_kib(pid, "VmRSS"); }
long peak_rss_kib(int pid) { return status_field_kib(pid, "VmHWM"); }

void reset_peak_rss(int pid) {
  if (std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/clear_refs").c_str(), "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

std::string http_get(const std::string& url) {
  std::string out;
  std::FILE* p = ::popen(("curl -sf --max-time 10 '" + url + "'").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

double metric_sum(const std::string& text, const std::string& metric, const std::string& label_filter) {
  double sum = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(metric, 0) != 0) continue;
    size_t after = metric.size();
    if (after < line.size() && line[after] != '{' && line[after] != ' ') continue;  // a longer name
    if (!label_filter.empty() && line.find(label_filter) == std::string::npos) continue;
    sum += std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
  }
  return sum;
}

}  // namespace berth::bench
