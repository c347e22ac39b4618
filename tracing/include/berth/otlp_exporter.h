// OtlpExporter: sends finished spans to an OpenTelemetry collector over OTLP/HTTP with the JSON
// encoding (POST <endpoint>, as collectors take on port 4318 at /v1/traces), in batches from a
// thread of its own. Written by hand on Beast (already berthd's HTTP library): Debian 12 packages
// no OpenTelemetry C++ SDK. Plain HTTP only, for a collector or agent on the node. Spans queue in
// a bounded buffer; when the collector is slow or gone, the oldest are dropped and counted, and a
// failed send is logged at most once a minute: tracing never holds up or grows berthd.
#pragma once

#include <memory>
#include <string>

#include "berth/status.h"
#include "berth/tracer.h"

namespace berth {

class OtlpExporter final : public SpanSink {
 public:
  // `endpoint`: "http://host:port/path".
  static Result<std::unique_ptr<OtlpExporter>> start(const std::string& endpoint, std::string service_name);
  ~OtlpExporter() override;  // sends what is queued (bounded by the send timeout), then stops

  void submit(SpanRecord span) override;

 private:
  struct Impl;
  explicit OtlpExporter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The OTLP/JSON request body for `spans` (ids in hex, times in nanoseconds as strings).
std::string otlp_json(const std::vector<SpanRecord>& spans, const std::string& service_name);

}  // namespace berth
