// Spans of berth's own steps, continuing the trace of the kubelet call that caused them: the rpc
// (a server span, child of the caller's traceparent), and inside it the runtime's commands, the
// CNI plugins and the image pull. Off until an OTLP endpoint is configured, and then only for calls
// that came with a sampled traceparent: a call without one costs a thread-local read.
// The current span is per thread; work handed to another thread takes it along (Tracer::current,
// ScopedTraceParent).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/trace_context.h"

namespace berth {

struct SpanRecord {
  TraceContext context;  // this span's trace id and span id
  std::optional<std::array<uint8_t, 8>> parent_span_id;
  std::string name;
  int kind = 1;  // OTLP SpanKind: 1 internal, 2 server, 3 client
  int64_t start_ns = 0, end_ns = 0;
  std::vector<std::pair<std::string, std::string>> attributes;
  bool error = false;
  std::string status_message;
};

// Where finished spans go (the OTLP exporter; a test's own).
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void submit(SpanRecord span) = 0;
};

namespace tracing {

// Installs the sink spans go to (null: tracing off). Set once at start, before any call.
void set_sink(SpanSink* sink);
bool enabled();
// The span current on this thread, if any: what a span opened now would be the child of.
std::optional<TraceContext> current();

}  // namespace tracing

// A span from construction to destruction, current on this thread meanwhile. With no current
// context (or tracing off, or the parent not sampled) it records nothing.
class ScopedSpan {
 public:
  explicit ScopedSpan(std::string name, int kind = 1);
  // The server span of an rpc: child of the caller's traceparent (metadata), when there is one.
  static ScopedSpan server(std::string name, const std::optional<TraceContext>& caller);
  ~ScopedSpan();
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;
  ScopedSpan(ScopedSpan&& other) noexcept;
  ScopedSpan& operator=(ScopedSpan&&) = delete;

  bool recording() const { return record_ != nullptr; }
  void attribute(std::string key, std::string value);
  void fail(std::string message);

 private:
  ScopedSpan() = default;
  void open(std::string name, int kind, const TraceContext& parent);
  std::unique_ptr<SpanRecord> record_;
  std::optional<TraceContext> previous_;
};

// Makes `context` current on this thread for its lifetime (work run on behalf of another
// thread's span: the CNI plugins run beside RunPodSandbox's other steps).
class ScopedTraceParent {
 public:
  explicit ScopedTraceParent(const std::optional<TraceContext>& context);
  ~ScopedTraceParent();
  ScopedTraceParent(const ScopedTraceParent&) = delete;
  ScopedTraceParent& operator=(const ScopedTraceParent&) = delete;

 private:
  std::optional<TraceContext> previous_;
};

}  // namespace berth
