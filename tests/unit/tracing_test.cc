// Tracing: traceparent as the W3C specification reads it, spans nested per thread and carried to
// another thread, and the OTLP/JSON body a collector takes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <thread>
#include <vector>

#include "berth/otlp_exporter.h"
#include "berth/trace_context.h"
#include "berth/tracer.h"

namespace berth {
namespace {

constexpr const char* kCaller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

TEST(Traceparent, ReadsVersion00AndRefusesWhatTheSpecificationRefuses) {
  auto c = parse_traceparent(kCaller);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(hex(c->trace_id.data(), 16), "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(hex(c->span_id.data(), 8), "b7ad6b7169203331");
  EXPECT_TRUE(c->sampled());
  EXPECT_EQ(format_traceparent(*c), kCaller);
  EXPECT_FALSE(parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")->sampled());
  // A later version is read by its first fields, and may carry more after a dash.
  EXPECT_TRUE(parse_traceparent("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra").has_value());
  for (const char* bad : {"", "00", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                          "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                          "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
                          "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
                          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
                          "00-0af7651916cd43dd8448eb211c80319-cb7ad6b7169203331-01",
                          "00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01",
                          "0g-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                          "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0z"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_traceparent(bad).has_value());
  }
}

class CollectedSpans final : public SpanSink {
 public:
  CollectedSpans() { tracing::set_sink(this); }
  ~CollectedSpans() override { tracing::set_sink(nullptr); }
  void submit(SpanRecord span) override {
    std::lock_guard lock(mu_);
    spans_.push_back(std::move(span));
  }
  std::vector<SpanRecord> spans() {
    std::lock_guard lock(mu_);
    return spans_;
  }

 private:
  std::mutex mu_;
  std::vector<SpanRecord> spans_;
};

TEST(Spans, NestUnderTheCallersContextOnThisThreadAndAnother) {
  CollectedSpans sink;
  const auto caller = parse_traceparent(kCaller);
  {
    ScopedSpan server = ScopedSpan::server("CRI RunPodSandbox", caller);
    ASSERT_TRUE(server.recording());
    {
      ScopedSpan runtime("runtime create", 3);
      runtime.fail("exit status 1");
    }
    std::thread([parent = tracing::current()] {
      ScopedTraceParent trace(parent);
      ScopedSpan cni("cni ADD bridge", 3);
    }).join();
  }
  EXPECT_FALSE(tracing::current().has_value());
  auto spans = sink.spans();
  ASSERT_EQ(spans.size(), 3u);
  const SpanRecord& server = spans[2];  // ends last
  EXPECT_EQ(server.name, "CRI RunPodSandbox");
  EXPECT_EQ(server.kind, 2);
  EXPECT_EQ(server.context.trace_id, caller->trace_id);
  EXPECT_EQ(server.parent_span_id, caller->span_id);
  for (int i : {0, 1}) {
    EXPECT_EQ(spans[i].context.trace_id, caller->trace_id) << i;
    EXPECT_EQ(spans[i].parent_span_id, server.context.span_id) << i;
    EXPECT_LE(server.start_ns, spans[i].start_ns);
    EXPECT_GE(server.end_ns, spans[i].end_ns);
  }
  EXPECT_TRUE(spans[0].error);
  EXPECT_EQ(spans[0].status_message, "exit status 1");
}

TEST(Spans, NothingIsRecordedWithoutASampledCallerOrASink) {
  {
    CollectedSpans sink;
    { ScopedSpan server = ScopedSpan::server("CRI Version", std::nullopt); }
    {
      ScopedSpan server = ScopedSpan::server(
          "CRI Version", parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"));
    }
    { ScopedSpan orphan("runtime state"); }
    EXPECT_TRUE(sink.spans().empty());
  }
  ScopedSpan server = ScopedSpan::server("CRI Version", parse_traceparent(kCaller));
  EXPECT_FALSE(server.recording());  // no sink: tracing is off
}

TEST(OtlpJson, IdsInHexTimesAsStringsAndTheServiceName) {
  SpanRecord s;
  s.context = *parse_traceparent(kCaller);
  s.parent_span_id = std::array<uint8_t, 8>{1, 2, 3, 4, 5, 6, 7, 8};
  s.name = "cni ADD bridge";
  s.kind = 3;
  s.start_ns = 1700000000000000001;
  s.end_ns = 1700000000000000002;
  s.attributes = {{"cni.plugin", "bridge"}};
  s.error = true;
  s.status_message = "bad \xff bytes";
  auto body = nlohmann::json::parse(otlp_json({s}, "berth"));
  const auto& rs = body["resourceSpans"][0];
  EXPECT_EQ(rs["resource"]["attributes"][0]["key"], "service.name");
  EXPECT_EQ(rs["resource"]["attributes"][0]["value"]["stringValue"], "berth");
  const auto& span = rs["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(span["traceId"], "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(span["spanId"], "b7ad6b7169203331");
  EXPECT_EQ(span["parentSpanId"], "0102030405060708");
  EXPECT_EQ(span["kind"], 3);
  EXPECT_EQ(span["startTimeUnixNano"], "1700000000000000001");
  EXPECT_EQ(span["status"]["code"], 2);
  EXPECT_EQ(span["attributes"][0]["value"]["stringValue"], "bridge");
}

TEST(OtlpExporter, AnEndpointThatIsNotPlainHttpWithAPortIsRefused) {
  for (const char* bad : {"https://127.0.0.1:4318/v1/traces", "127.0.0.1:4318", "http://127.0.0.1/v1/traces"}) {
    SCOPED_TRACE(bad);
    auto e = OtlpExporter::start(bad, "berth");
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.status().message().find("tracing_endpoint"), std::string::npos) << e.status().message();
  }
}

}  // namespace
}  // namespace berth
