// Fuzz target: the W3C traceparent berthd reads from every traced call's metadata
// (tracing/trace_context.cc), and the OTLP/JSON body built from spans whose names and attributes
// come from outside (a plugin's error text: any bytes). What parses must format back to itself
// (version 00) and carry non-zero ids; the JSON must always be valid JSON.
#include <nlohmann/json.hpp>

#include <string>

#include "berth/otlp_exporter.h"
#include "berth/trace_context.h"
#include "fuzz_support.h"

using namespace berth;

BERTH_FUZZ_TARGET(traceparent) {
  fuzz::Reader in(data, size);
  std::string text(in.rest());
  auto c = parse_traceparent(text);
  if (c) {
    bool zero_trace = true, zero_span = true;
    for (uint8_t b : c->trace_id) zero_trace &= b == 0;
    for (uint8_t b : c->span_id) zero_span &= b == 0;
    FUZZ_CHECK(!zero_trace && !zero_span);
    auto again = parse_traceparent(format_traceparent(*c));
    FUZZ_CHECK(again && again->trace_id == c->trace_id && again->span_id == c->span_id && again->flags == c->flags);
    if (text.rfind("00-", 0) == 0) FUZZ_CHECK(format_traceparent(*c) == text);
  }
  SpanRecord span;
  span.name = text;
  span.attributes = {{text, text}};
  span.status_message = text;
  FUZZ_CHECK(!nlohmann::json::parse(otlp_json({span}, text), nullptr, false).is_discarded());
  return 0;
}
