// MetricsEndpoint: serves GET /metrics (Prometheus text) on a TCP address from one thread of its
// own, so scrapes never take a gRPC worker. Off unless berth.toml names an address.
#pragma once

#include <memory>
#include <string>

#include "berth/metrics_registry.h"
#include "berth/status.h"

namespace berth {

class MetricsEndpoint {
 public:
  // "127.0.0.1:9464", "[::1]:9464", port 0 picks a free port.
  static Result<std::unique_ptr<MetricsEndpoint>> start(const std::string& address, const MetricsRegistry& registry);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // The address actually bound, "host:port".
  const std::string& address() const;

  struct Impl;

 private:
  explicit MetricsEndpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth
