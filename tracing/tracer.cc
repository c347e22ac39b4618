// The current span per thread and ScopedSpan's records (see tracer.h).
#include "berth/tracer.h"

#include <atomic>

#include "berth/wall_clock.h"

namespace berth {

namespace {

std::atomic<SpanSink*> g_sink{nullptr};
thread_local std::optional<TraceContext> t_current;

}  // namespace

namespace tracing {

void set_sink(SpanSink* sink) { g_sink.store(sink, std::memory_order_release); }
bool enabled() { return g_sink.load(std::memory_order_acquire) != nullptr; }
std::optional<TraceContext> current() { return t_current; }

}  // namespace tracing

ScopedSpan::ScopedSpan(std::string name, int kind) {
  if (t_current && t_current->sampled() && tracing::enabled()) open(std::move(name), kind, *t_current);
}

ScopedSpan ScopedSpan::server(std::string name, const std::optional<TraceContext>& caller) {
  ScopedSpan span;
  if (caller && caller->sampled() && tracing::enabled()) span.open(std::move(name), 2, *caller);
  return span;
}

void ScopedSpan::open(std::string name, int kind, const TraceContext& parent) {
  record_ = std::make_unique<SpanRecord>();
  record_->context.trace_id = parent.trace_id;
  record_->context.flags = parent.flags;
  random_id(record_->context.span_id.data(), record_->context.span_id.size());
  record_->parent_span_id = parent.span_id;
  record_->name = std::move(name);
  record_->kind = kind;
  record_->start_ns = wall_clock_ns();
  previous_ = t_current;
  t_current = record_->context;
}

ScopedSpan::ScopedSpan(ScopedSpan&& other) noexcept
    : record_(std::move(other.record_)), previous_(std::move(other.previous_)) {}

ScopedSpan::~ScopedSpan() {
  if (!record_) return;
  t_current = previous_;
  record_->end_ns = wall_clock_ns();
  if (SpanSink* sink = g_sink.load(std::memory_order_acquire)) sink->submit(std::move(*record_));
}

void ScopedSpan::attribute(std::string key, std::string value) {
  if (record_) record_->attributes.emplace_back(std::move(key), std::move(value));
}

void ScopedSpan::fail(std::string message) {
  if (!record_) return;
  record_->error = true;
  record_->status_message = std::move(message);
}

ScopedTraceParent::ScopedTraceParent(const std::optional<TraceContext>& context) : previous_(t_current) {
  t_current = context;
}

ScopedTraceParent::~ScopedTraceParent() { t_current = previous_; }

}  // namespace berth
