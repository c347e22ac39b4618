// W3C Trace Context (traceparent) as kubelet sends it on its CRI calls when its tracing is on:
// "00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>". Parsed from outside bytes, so
// anything else is no context at all (the call runs untraced), never an error.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace berth {

struct TraceContext {
  std::array<uint8_t, 16> trace_id{};
  std::array<uint8_t, 8> span_id{};
  uint8_t flags = 0;
  bool sampled() const { return flags & 1; }
};

// Version 00 exactly; a later version (not ff) is read by its first four fields, as the
// specification asks. All-zero ids, upper-case hex and wrong lengths are refused.
std::optional<TraceContext> parse_traceparent(std::string_view text);
std::string format_traceparent(const TraceContext& c);

std::string hex(const uint8_t* bytes, size_t n);
// A random id of n bytes (never all zero).
void random_id(uint8_t* out, size_t n);

}  // namespace berth
