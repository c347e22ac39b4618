// berthd's Prometheus endpoint: off by default, served at metrics_address when configured, rpc
// counters and latency histograms move with calls, and a bad address stops the start.
#include <gtest/gtest.h>

#include "berth/test/daemon_process.h"
#include "berth/test/helper_process.h"

namespace berth::test {
namespace {

namespace v1 = runtime::v1;

// The value of the sample line that starts with `series ` (exact series text), or -1.
double sample(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(DaemonMetrics, RpcCountersAndHistogramsMove) {
  int port = free_loopback_port();
  DaemonProcess d({.config_toml = "metrics_address = \"127.0.0.1:" + std::to_string(port) + "\"\n"});
  ASSERT_TRUE(d.start()) << d.log();
  auto rt = d.runtime();
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext ctx;
    v1::VersionResponse resp;
    ASSERT_TRUE(rt->Version(&ctx, v1::VersionRequest(), &resp).ok());
  }
  {
    grpc::ClientContext ctx;
    v1::CheckpointContainerResponse resp;
    EXPECT_EQ(rt->CheckpointContainer(&ctx, v1::CheckpointContainerRequest(), &resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  std::string reply = http_get(port, "/metrics");
  ASSERT_EQ(reply.rfind("HTTP/1.0 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << reply;
  double versions = sample(reply, "berth_rpc_requests_total{method=\"Version\",code=\"OK\"}");
  EXPECT_GE(versions, 3) << reply;  // the harness's readiness probe calls Version too
  EXPECT_EQ(sample(reply, "berth_rpc_requests_total{method=\"CheckpointContainer\",code=\"INVALID_ARGUMENT\"}"), 1)
      << reply;
  EXPECT_EQ(sample(reply, "berth_rpc_duration_seconds_count{method=\"Version\",code=\"OK\"}"), versions) << reply;
  EXPECT_EQ(sample(reply, "berth_rpc_duration_seconds_bucket{method=\"Version\",code=\"OK\",le=\"+Inf\"}"), versions)
      << reply;
  EXPECT_EQ(sample(reply, "berth_rpc_duration_seconds_count{method=\"CheckpointContainer\",code=\"INVALID_ARGUMENT\"}"),
            1)
      << reply;
  {
    grpc::ClientContext ctx;
    v1::VersionResponse resp;
    ASSERT_TRUE(rt->Version(&ctx, v1::VersionRequest(), &resp).ok());
  }
  EXPECT_EQ(sample(http_get(port, "/metrics"), "berth_rpc_requests_total{method=\"Version\",code=\"OK\"}"),
            versions + 1);
  EXPECT_NE(http_get(port, "/nothing").find(" 404 "), std::string::npos);
}

TEST(DaemonMetrics, OffByDefault) {
  int port = free_loopback_port();
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  EXPECT_EQ(http_get(port, "/metrics"), "");
  EXPECT_EQ(d.log().find("Prometheus"), std::string::npos) << d.log();
}

TEST(DaemonMetrics, BadAddressStopsStartNamingKey) {
  DaemonProcess d({.config_toml = "metrics_address = \"localhost:nine\"\n", .wait_ready = false});
  ASSERT_TRUE(d.start());
  EXPECT_EQ(d.wait_exit(std::chrono::seconds(10)), 2);
  EXPECT_NE(d.log().find("key 'metrics_address'"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("berth.toml"), std::string::npos) << d.log();
}

}  // namespace
}  // namespace berth::test

namespace berth::test {
namespace {

TEST(DaemonMetrics, ListMetricDescriptorsNamesCadvisorMetrics) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  grpc::ClientContext ctx;
  runtime::v1::ListMetricDescriptorsResponse resp;
  ASSERT_TRUE(d.runtime()->ListMetricDescriptors(&ctx, {}, &resp).ok());
  std::map<std::string, std::vector<std::string>> by_name;
  for (const auto& m : resp.descriptors()) {
    EXPECT_FALSE(m.help().empty()) << m.name();
    by_name[m.name()] = {m.label_keys().begin(), m.label_keys().end()};
  }
  ASSERT_TRUE(by_name.count("container_cpu_usage_seconds_total"));
  ASSERT_TRUE(by_name.count("container_memory_working_set_bytes"));
  ASSERT_TRUE(by_name.count("container_network_receive_bytes_total"));
  EXPECT_EQ(by_name["container_cpu_usage_seconds_total"],
            (std::vector<std::string>{"container", "id", "image", "name", "namespace", "pod"}));
  EXPECT_EQ(by_name["container_network_receive_bytes_total"].back(), "interface");
}

}  // namespace
}  // namespace berth::test
