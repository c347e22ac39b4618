// The rpc counters and latency histogram every RpcScope records into, once berthd installs them.
// A process-wide hook because RpcScope is opened in every handler without the service context.
#pragma once

#include "berth/metrics_registry.h"

namespace berth {

struct RpcMetrics {
  CounterFamily& calls;      // berth_rpc_requests_total{method,code}
  HistogramFamily& latency;  // berth_rpc_duration_seconds{method,code}
};

// Registers the families in `registry` and makes RpcScope record into them (until the returned
// pointer's owner, the daemon, uninstalls at shutdown by passing nullptr to set_rpc_metrics).
RpcMetrics make_rpc_metrics(MetricsRegistry& registry);
void set_rpc_metrics(RpcMetrics* metrics);
RpcMetrics* rpc_metrics();

// The families made and installed for as long as this lives (berthd's life, within its registry's).
class InstalledRpcMetrics {
 public:
  explicit InstalledRpcMetrics(MetricsRegistry& registry) : metrics_(make_rpc_metrics(registry)) {
    set_rpc_metrics(&metrics_);
  }
  ~InstalledRpcMetrics() { set_rpc_metrics(nullptr); }
  InstalledRpcMetrics(const InstalledRpcMetrics&) = delete;
  InstalledRpcMetrics& operator=(const InstalledRpcMetrics&) = delete;

 private:
  RpcMetrics metrics_;
};

}  // namespace berth
