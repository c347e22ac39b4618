// Durations of rpcs made from several client threads at once, kept per call type, so a load that
// mixes calls (the kubelet steady state) reports p50/p99 of each.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bench_figures.h"

namespace berth::bench {

class CallLatencies {
 public:
  // Runs `call` (false: it failed), records its duration under `name`, returns what it returned.
  bool time(const std::string& name, const std::function<bool()>& call);
  void add(const std::string& name, double ms, bool ok);
  // One table row per call type, and "figure" lines <prefix>.<call>.p50_ms / .p99_ms / .calls / .failures.
  void print(const std::string& prefix) const;

 private:
  struct Samples {
    std::vector<double> ms;
    size_t failures = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Samples> by_call_;
};

}  // namespace berth::bench
