// Port forwarding through the streaming server end to end: SPDY stream pairs and WebSocket
// channel pairs to a real listener, on the host or inside a network namespace; errors; a client
// that reads nothing; connects that hang; threads that cannot be started.
#include "berth/netns_connect.h"
#include "berth/test/hostile_peer.h"
#include "streaming_fixture.h"

using namespace berth;
using namespace berth::test;

namespace {

void echo_check(PortForwardClient::Stream& s, const std::string& payload) {
  std::string got;
  std::thread writer([&] { ASSERT_TRUE(s.write(payload).ok()); });
  auto r = s.read_exact(payload.size(), kWait);
  writer.join();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(*r == payload) << "payload of " << payload.size() << " bytes differs";
}

TEST_F(StreamingTest, PortForwardOverSpdy) {
  TestServer echo;
  auto url = server_->register_port_forward("host");
  ASSERT_TRUE(url.ok());
  auto pf = PortForwardClient::connect(*url, {});
  ASSERT_TRUE(pf.ok()) << pf.status().message();
  EXPECT_EQ((*pf)->protocol(), "portforward.k8s.io");
  std::vector<PortForwardClient::Stream*> streams;
  for (int i = 0; i < 4; ++i) {
    auto s = (*pf)->open(echo.port());
    ASSERT_TRUE(s.ok());
    streams.push_back(*s);
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { echo_check(*streams[i], pseudo_random(1 << 20, 10 + i)); });
  for (auto& t : threads) t.join();
  auto big = (*pf)->open(echo.port());
  ASSERT_TRUE(big.ok());
  echo_check(**big, pseudo_random(64 << 20, 99));
  // Half-close travels to the pod's side, whose close comes back as the end of the stream.
  ASSERT_TRUE((*big)->close_write().ok());
  EXPECT_EQ((*big)->read_to_end(kWait), "");
  EXPECT_EQ((*pf)->window_violations(), 0u);
  EXPECT_EQ(echo.connections(), 5);
}

TEST_F(StreamingTest, PortForwardOverWebSocket) {
  TestServer echo;
  for (std::string proto : {"v4.channel.k8s.io", "v4.base64.channel.k8s.io"}) {
    SCOPED_TRACE(proto);
    auto url = server_->register_port_forward("host");
    ASSERT_TRUE(url.ok());
    StreamOptions o = websocket({proto});
    auto pf = PortForwardClient::connect(*url, o, {echo.port(), echo.port(), echo.port(), echo.port()});
    ASSERT_TRUE(pf.ok()) << pf.status().message();
    EXPECT_EQ((*pf)->protocol(), proto);
    std::vector<PortForwardClient::Stream*> streams;
    for (int i = 0; i < 4; ++i) {
      auto s = (*pf)->open(echo.port());
      ASSERT_TRUE(s.ok()) << s.status().message();
      streams.push_back(*s);
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
      threads.emplace_back([&, i] { echo_check(*streams[i], pseudo_random(1 << 20, 20 + i)); });
    for (auto& t : threads) t.join();
    echo_check(*streams[3], pseudo_random(proto.find("base64") == std::string::npos ? 64 << 20 : 8 << 20, 98));
  }
  // Ports registered with the request (kubelet passes them in PortForwardRequest) need no query.
  auto url = server_->register_port_forward("host", {echo.port()});
  auto pf = PortForwardClient::connect(*url, websocket({"v4.channel.k8s.io"}));
  ASSERT_TRUE(pf.ok());
}

TEST_F(StreamingTest, PortForwardIntoANetworkNamespace) {
  Netns ns;
  ASSERT_TRUE(ns.ok()) << "ip netns add failed";
  TestServer echo(TestServer::Mode::echo, ns.name());
  auto url = server_->register_port_forward(ns.name());
  auto pf = PortForwardClient::connect(*url, {});
  ASSERT_TRUE(pf.ok());
  auto s = (*pf)->open(echo.port());
  ASSERT_TRUE(s.ok());
  echo_check(**s, "inside the pod's netns\n");
  // The same port on the host's loopback is not that listener.
  auto host = connect_in_netns("", echo.port(), 2s);
  EXPECT_FALSE(host.ok());
}

TEST_F(StreamingTest, PortForwardReachesAListenerOnIpv6LoopbackOnly) {
  UniqueFd l(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(l);
  int one = 1;
  ::setsockopt(l.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  if (::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) GTEST_SKIP() << "no ::1 on this host";
  ASSERT_EQ(::listen(l.get(), 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len);
  auto c = connect_in_netns("", ntohs(a.sin6_port), 2s);
  ASSERT_TRUE(c.ok()) << c.status().message();
  UniqueFd accepted(::accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC));
  EXPECT_TRUE(accepted);
}

TEST_F(StreamingTest, PortForwardErrorsGoToTheErrorStream) {
  int closed_port;
  {
    TestServer gone;
    closed_port = gone.port();
  }
  auto url = server_->register_port_forward("host");
  auto pf = PortForwardClient::connect(*url, {});
  ASSERT_TRUE(pf.ok());
  auto s = (*pf)->open(closed_port);
  ASSERT_TRUE(s.ok());
  std::string err = (*s)->error_text(kWait);
  EXPECT_NE(err.find("error forwarding port " + std::to_string(closed_port)), std::string::npos) << err;
  EXPECT_NE(err.find("Connection refused"), std::string::npos) << err;
  EXPECT_EQ((*s)->read_to_end(kWait), "");

  auto wurl = server_->register_port_forward("host");
  auto wpf = PortForwardClient::connect(*wurl, websocket({"v4.channel.k8s.io"}), {closed_port});
  ASSERT_TRUE(wpf.ok());
  auto ws = (*wpf)->open(closed_port);
  ASSERT_TRUE(ws.ok());
  EXPECT_NE((*ws)->error_text(kWait).find("Connection refused"), std::string::npos);
  EXPECT_TRUE((*wpf)->wait_closed(kWait));
}

// The request of TestServer's sink/source mode: download `n` bytes.
std::string download_request(uint64_t n) {
  std::string h(9, 'd');
  for (int i = 0; i < 8; ++i) h[i] = char(n >> (56 - 8 * i));
  return h;
}

TEST_F(StreamingTest, PortForwardToAClientThatReadsNothingStopsReadingThePod) {
  TestServer source(TestServer::Mode::sink_source);
  for (bool websocket : {false, true}) {
    SCOPED_TRACE(websocket ? "websocket" : "spdy");
    uint64_t before = source.bytes_sent();
    int connections = source.connections();
    auto url = server_->register_port_forward("host", {source.port()});
    ASSERT_TRUE(url.ok());
    auto peer = websocket ? HostilePeer::websocket(*url, "v4.channel.k8s.io")  //
                          : HostilePeer::spdy(*url, "portforward.k8s.io");
    ASSERT_TRUE(peer.ok()) << peer.status().message();
    if (websocket) {
      ASSERT_TRUE((*peer)->send(HostilePeer::ws_frame(0x2, std::string(1, '\0') + download_request(1ull << 40))).ok());
    } else {
      ASSERT_TRUE((*peer)->open_forward_streams(source.port()).ok());
      ASSERT_TRUE((*peer)->send(HostilePeer::spdy_data(3, 0, download_request(1ull << 40))).ok());
    }
    ASSERT_TRUE(eventually([&] { return source.connections() == connections + 1 && source.bytes_sent() > before; }));
    std::this_thread::sleep_for(1s);  // time to fill every buffer on the way
    EXPECT_LT(source.bytes_sent() - before, 64ull << 20);
  }
}

TEST_F(StreamingTest, PortForwardConnectsNeverHoldUpAnExec) {
  // Connects that hang (a pod's listener whose backlog is full) take only the connect threads.
  TestServer echo;
  backend_.hold_connects(true);
  auto url = server_->register_port_forward("host");
  auto pf = PortForwardClient::connect(*url, {});
  ASSERT_TRUE(pf.ok()) << pf.status().message();
  std::vector<PortForwardClient::Stream*> streams;
  for (int i = 0; i < 8; ++i) {
    auto s = (*pf)->open(echo.port());
    ASSERT_TRUE(s.ok());
    streams.push_back(*s);
  }
  ASSERT_TRUE(eventually([&] { return backend_.connects_waiting() == StreamingServerConfig{}.connect_threads; }));
  auto r = run_command(sh("echo exec goes on"), spdy("v4.channel.k8s.io"));
  EXPECT_EQ(backend_.connects_waiting(), StreamingServerConfig{}.connect_threads);
  backend_.hold_connects(false);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "exec goes on\n");
  for (auto* s : streams) echo_check(*s, "connected at last\n");
}

TEST_F(StreamingTest, AThreadThatCannotStartFailsOnlyItsRequest) {
  Netns ns;
  ASSERT_TRUE(ns.ok()) << "ip netns add failed";
  TestServer echo(TestServer::Mode::echo, ns.name());
  auto url = server_->register_port_forward(ns.name());
  auto pf = PortForwardClient::connect(*url, {});  // its reader thread starts before the limit
  ASSERT_TRUE(pf.ok()) << pf.status().message();
  {
    PidsLimit limit;
    if (!limit.ok()) GTEST_SKIP() << "no writable cgroup v1 pids hierarchy to keep this process from making threads";
    auto direct = connect_in_netns("/run/netns/" + ns.name(), echo.port(), 2s);
    EXPECT_EQ(direct.status().code(), Code::resource_exhausted) << direct.status().message();
    // The port forward that needs a thread fails on its error stream; the connection stays.
    auto s = (*pf)->open(echo.port());
    ASSERT_TRUE(s.ok());
    std::string err = (*s)->error_text(kWait);
    EXPECT_NE(err.find("cannot start a thread"), std::string::npos) << err;
    // A server that cannot start its threads is an error, not an exception.
    auto other = StreamingServer::start({}, backend_);
    ASSERT_FALSE(other.ok());
    EXPECT_EQ(other.status().code(), Code::resource_exhausted) << other.status().message();
  }
  auto s = (*pf)->open(echo.port());
  ASSERT_TRUE(s.ok());
  echo_check(**s, "threads again\n");
}

}  // namespace
