// Holds the installed RpcMetrics; an atomic pointer so handlers read it without a lock.
#include "rpc_metrics.h"

#include <atomic>

namespace berth {

static std::atomic<RpcMetrics*> installed{nullptr};

RpcMetrics make_rpc_metrics(MetricsRegistry& registry) {
  return RpcMetrics{
      registry.counter("berth_rpc_requests_total", "CRI rpcs served, by method and status code.", {"method", "code"}),
      registry.histogram("berth_rpc_duration_seconds", "CRI rpc latency, by method and status code.",
                         {"method", "code"}, MetricsRegistry::latency_buckets())};
}

void set_rpc_metrics(RpcMetrics* metrics) { installed.store(metrics, std::memory_order_release); }

RpcMetrics* rpc_metrics() { return installed.load(std::memory_order_acquire); }

}  // namespace berth
