// The OTLP/JSON encoding of a batch of spans: resourceSpans > scopeSpans > spans, with trace and
// span ids as hex strings and 64-bit times as decimal strings, as OTLP's JSON mapping specifies.
#include <nlohmann/json.hpp>

#include "berth/otlp_exporter.h"

namespace berth {

std::string otlp_json(const std::vector<SpanRecord>& spans, const std::string& service_name) {
  nlohmann::json out_spans = nlohmann::json::array();
  for (const SpanRecord& s : spans) {
    nlohmann::json attrs = nlohmann::json::array();
    for (const auto& [k, v] : s.attributes) attrs.push_back({{"key", k}, {"value", {{"stringValue", v}}}});
    nlohmann::json span = {{"traceId", hex(s.context.trace_id.data(), s.context.trace_id.size())},
                           {"spanId", hex(s.context.span_id.data(), s.context.span_id.size())},
                           {"name", s.name},
                           {"kind", s.kind},
                           {"startTimeUnixNano", std::to_string(s.start_ns)},
                           {"endTimeUnixNano", std::to_string(s.end_ns)},
                           {"attributes", attrs},
                           {"status", {{"code", s.error ? 2 : 1}, {"message", s.status_message}}}};
    if (s.parent_span_id) span["parentSpanId"] = hex(s.parent_span_id->data(), s.parent_span_id->size());
    out_spans.push_back(std::move(span));
  }
  nlohmann::json body = {
      {"resourceSpans",
       {{{"resource", {{"attributes", {{{"key", "service.name"}, {"value", {{"stringValue", service_name}}}}}}}},
         {"scopeSpans", {{{"scope", {{"name", "berth"}}}, {"spans", out_spans}}}}}}}};
  // Attribute values (a plugin's error text) need not be UTF-8: replaced rather than thrown on.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace berth
