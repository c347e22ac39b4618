// MetricsRegistry's text format and the /metrics endpoint over a real TCP connection.
#include <utility>  // Boost 1.74 asio uses std::exchange without including it (C++20)
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "berth/metrics_endpoint.h"
#include "berth/metrics_registry.h"

namespace berth {
namespace {

namespace http = boost::beast::http;

TEST(MetricsRegistry, CountersRenderWithEscapedLabels) {
  MetricsRegistry r;
  auto& c = r.counter("berth_rpc_total", "RPCs served.\nBy method", {"method", "code"});
  c.add({"Version", "OK"});
  c.add({"Version", "OK"}, 2);
  c.add({"Pull\"Image\\", "NOT_FOUND"});
  c.add({"Version", "OK"}, -5);  // ignored: counters never go down
  EXPECT_EQ(c.value({"Version", "OK"}), 3);
  std::string text = r.render();
  EXPECT_NE(text.find("# HELP berth_rpc_total RPCs served.\\nBy method\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE berth_rpc_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("berth_rpc_total{method=\"Version\",code=\"OK\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("berth_rpc_total{method=\"Pull\\\"Image\\\\\",code=\"NOT_FOUND\"} 1\n"), std::string::npos)
      << text;
}

TEST(MetricsRegistry, HistogramBucketsAreCumulative) {
  MetricsRegistry r;
  auto& h = r.histogram("berth_cni_exec_seconds", "CNI plugin execs.", {"plugin"}, {0.01, 0.1, 1});
  h.observe({"bridge"}, 0.005);
  h.observe({"bridge"}, 0.05);
  h.observe({"bridge"}, 0.05);
  h.observe({"bridge"}, 5);
  EXPECT_EQ(h.count({"bridge"}), 4u);
  std::string text = r.render();
  EXPECT_NE(text.find("# TYPE berth_cni_exec_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("berth_cni_exec_seconds_bucket{plugin=\"bridge\",le=\"0.01\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("berth_cni_exec_seconds_bucket{plugin=\"bridge\",le=\"0.1\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("berth_cni_exec_seconds_bucket{plugin=\"bridge\",le=\"1\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("berth_cni_exec_seconds_bucket{plugin=\"bridge\",le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("berth_cni_exec_seconds_sum{plugin=\"bridge\"} 5.105\n"), std::string::npos) << text;
  EXPECT_NE(text.find("berth_cni_exec_seconds_count{plugin=\"bridge\"} 4\n"), std::string::npos) << text;
}

TEST(MetricsRegistry, GaugeIsReadAtRenderTime) {
  MetricsRegistry r;
  int running = 2;
  r.gauge("berth_containers_running", "Containers running.", [&] { return running; });
  EXPECT_NE(r.render().find("berth_containers_running 2\n"), std::string::npos);
  running = 7;
  EXPECT_NE(r.render().find("berth_containers_running 7\n"), std::string::npos);
}

struct HttpReply {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

HttpReply http_get(const std::string& address, const std::string& target) {
  namespace asio = boost::asio;
  asio::io_context ioc;
  asio::ip::tcp::resolver resolver(ioc);
  size_t colon = address.rfind(':');
  boost::beast::tcp_stream stream(ioc);
  stream.connect(resolver.resolve(address.substr(0, colon), address.substr(colon + 1)));
  http::request<http::empty_body> req(http::verb::get, target, 11);
  req.set(http::field::host, address);
  http::write(stream, req);
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(stream, buf, res);
  return {res.result_int(), std::string(res[http::field::content_type]), res.body()};
}

TEST(MetricsEndpoint, ServesMetricsAndCountersMove) {
  MetricsRegistry r;
  auto& c = r.counter("berth_image_pull_bytes_total", "Bytes pulled.", {});
  auto ep = MetricsEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  std::string addr = (*ep)->address();
  ASSERT_EQ(addr.rfind("127.0.0.1:", 0), 0u) << addr;
  c.add({}, 1024);
  auto first = http_get(addr, "/metrics");
  EXPECT_EQ(first.status, 200u);
  EXPECT_EQ(first.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(first.body.find("berth_image_pull_bytes_total 1024\n"), std::string::npos) << first.body;
  c.add({}, 1024);
  EXPECT_NE(http_get(addr, "/metrics").body.find("berth_image_pull_bytes_total 2048\n"), std::string::npos);
  EXPECT_EQ(http_get(addr, "/other").status, 404u);
}

TEST(MetricsEndpoint, BadAddressesAreRefused) {
  MetricsRegistry r;
  for (const char* bad : {"localhost", "127.0.0.1:http", "127.0.0.1:70000", "not-an-ip:9000", ":9000"}) {
    auto ep = MetricsEndpoint::start(bad, r);
    ASSERT_FALSE(ep.ok()) << bad;
    EXPECT_EQ(ep.status().code(), Code::invalid_argument) << bad;
    EXPECT_NE(ep.status().message().find(bad), std::string::npos) << ep.status().message();
  }
}

TEST(MetricsEndpoint, PortInUseIsAnError) {
  MetricsRegistry r;
  auto first = MetricsEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(first.ok());
  auto second = MetricsEndpoint::start((*first)->address(), r);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find((*first)->address()), std::string::npos);
}

// A raw TCP connection to the endpoint, sending `bytes` (if any); whether the endpoint answered it
// (bytes came back) or closed it unanswered.
struct RawPeer {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket socket{ioc};
  explicit RawPeer(const std::string& address) {
    size_t colon = address.rfind(':');
    boost::asio::ip::tcp::resolver resolver(ioc);
    boost::asio::connect(socket, resolver.resolve(address.substr(0, colon), address.substr(colon + 1)));
  }
  // Bytes the endpoint sends before it closes.
  std::string answer() {
    std::string out;
    boost::system::error_code ec;
    char buf[4096];
    for (size_t n; (n = socket.read_some(boost::asio::buffer(buf), ec)) > 0 && !ec;) out.append(buf, n);
    return out;
  }
};

// The endpoint's limits: past 16 connections a new one is closed unanswered, an oversized request
// header is refused, and the endpoint still serves once the idle peers are gone.
TEST(MetricsEndpoint, ConnectionsAndRequestsAreCapped) {
  MetricsRegistry r;
  auto ep = MetricsEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  const std::string addr = (*ep)->address();
  std::vector<std::unique_ptr<RawPeer>> idle;
  for (int i = 0; i < 16; ++i) idle.push_back(std::make_unique<RawPeer>(addr));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all accepted
  RawPeer over(addr);
  boost::system::error_code ignored;  // the endpoint may have closed it already
  boost::asio::write(over.socket, boost::asio::buffer(std::string("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")),
                     ignored);
  EXPECT_EQ(over.answer(), "") << "the 17th connection was served";
  idle.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // their exchanges end
  RawPeer big(addr);
  boost::asio::write(
      big.socket,
      boost::asio::buffer("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(9000, 'a') + "\r\n\r\n"),
      ignored);
  EXPECT_EQ(big.answer().find("200 OK"), std::string::npos) << "a 9 KB header was served";
  EXPECT_EQ(http_get(addr, "/metrics").status, 200u);
}

}  // namespace
}  // namespace berth
