// CallLatencies; see call_latencies.h.
#include "call_latencies.h"

#include <chrono>

namespace berth::bench {

bool CallLatencies::time(const std::string& name, const std::function<bool()>& call) {
  auto t0 = std::chrono::steady_clock::now();
  bool ok = call();
  add(name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), ok);
  return ok;
}

void CallLatencies::add(const std::string& name, double ms, bool ok) {
  std::lock_guard lock(mu_);
  Samples& s = by_call_[name];
  s.ms.push_back(ms);
  if (!ok) ++s.failures;
}

void CallLatencies::print(const std::string& prefix) const {
  std::lock_guard lock(mu_);
  print_header();
  for (const auto& [name, samples] : by_call_) {
    std::vector<double> ms = samples.ms;
    Figures f = figures_of(ms, samples.failures);
    row(name, f);
    figure(prefix + "." + name + ".p50_ms", f.p50_ms);
    figure(prefix + "." + name + ".p99_ms", f.p99_ms);
    figure(prefix + "." + name + ".calls", static_cast<double>(f.n));
    figure(prefix + "." + name + ".failures", static_cast<double>(f.failures));
  }
}

}  // namespace berth::bench
