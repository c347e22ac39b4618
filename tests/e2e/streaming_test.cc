// Exec, Attach and PortForward through a real berthd: the rpcs hand out URLs, and the tests' own
// streaming client (SPDY framing written apart from the server's, WebSocket through Beast) talks
// to them against real containers (runc exec, berth-monitor attach, a listener in the pod's netns);
// and hostile clients, whose floods must leave berthd's memory where it was.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <thread>

#include "berth/test/hostile_peer.h"
#include "berth/test/streaming_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

constexpr auto kWait = std::chrono::seconds(30);

class BerthdStreaming : public PodFixture {
 protected:
  grpc::Status attach(const std::string& id, bool in, bool tty, std::string* url) {
    grpc::ClientContext ctx;
    v1::AttachRequest req;
    req.set_container_id(id);
    req.set_stdin(in);
    req.set_stdout(true);
    req.set_stderr(!tty);
    req.set_tty(tty);
    v1::AttachResponse resp;
    grpc::Status s = cri_->runtime().Attach(&ctx, req, &resp);
    *url = resp.url();
    return s;
  }
  static std::string random_bytes(size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(gen());
    return s;
  }
};

TEST_F(BerthdStreaming, ExecOverSpdyAndWebSocket) {
  ready();
  std::string id = run(test_container("box", image(), {"sleep", "1000"}));
  struct Way {
    Transport transport;
    std::string protocol;
  };
  for (const auto& way :
       {Way{Transport::spdy, "v4.channel.k8s.io"}, Way{Transport::spdy, "v2.channel.k8s.io"},
        Way{Transport::websocket, "v5.channel.k8s.io"}, Way{Transport::websocket, "v4.channel.k8s.io"},
        Way{Transport::websocket, "v4.base64.channel.k8s.io"}}) {
    SCOPED_TRACE(way.protocol);
    std::string url = exec_url(id, {"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"}, false, true, true);
    ASSERT_EQ(url.find("http://127.0.0.1:"), 0u) << url;
    auto r = run_command(url, {.transport = way.transport, .protocols = {way.protocol}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->out, "to-out\n");
    EXPECT_EQ(r->err, "to-err\n");
    if (way.protocol != "v2.channel.k8s.io") {
      ASSERT_TRUE(r->exit_code.has_value()) << r->error_stream;
      EXPECT_EQ(*r->exit_code, 3);
    } else {
      EXPECT_NE(r->error_stream.find("3"), std::string::npos) << r->error_stream;
    }
  }
  // stdin reaches the command and its close ends it.
  std::string url = exec_url(id, {"cat"}, true, true, false);
  auto r = run_command(url, {.transport = Transport::spdy, .stdin = true, .stderr = false}, "through stdin\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "through stdin\n");
  EXPECT_EQ(r->exit_code.value_or(-1), 0);
}

TEST_F(BerthdStreaming, ExecWithATerminalSeesItsSizeAndResizes) {
  ready();
  std::string id = run(test_container("tty", image(), {"sleep", "1000"}));
  std::string url = exec_url(id, {"/bin/sh"}, true, true, false, true);
  auto c = RemoteCommandClient::connect(url, {.transport = Transport::websocket,
                                              .protocols = {"v5.channel.k8s.io"},
                                              .stdin = true,
                                              .stderr = false,
                                              .tty = true});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE((*c)->resize(100, 40).ok());
  ASSERT_TRUE((*c)->wait_stdout("# ", kWait));  // the shell's prompt: it reads its terminal now
  // `runc exec` gives the command a terminal of its own and copies berth's size onto it: first
  // once its copying has begun, which can come after the shell's first command on a busy host
  // (the shell then sees a 0x0 terminal), then on each SIGWINCH berth sends it. So the size is
  // asked until it shows, for a few seconds.
  auto sees = [&](const char* size) {
    for (int i = 0; i < 10; ++i) {
      if (!(*c)->send_stdin("stty size\n").ok()) return false;
      if ((*c)->wait_stdout(size, std::chrono::milliseconds(500))) return true;
    }
    return false;
  };
  if (!sees("40 100")) {
    auto r = (*c)->wait(kWait);
    FAIL() << "out: " << r.out << " err: " << r.err << " error stream: " << r.error_stream;
  }
  ASSERT_TRUE((*c)->resize(132, 50).ok());
  EXPECT_TRUE(sees("50 132"));
  ASSERT_TRUE((*c)->send_stdin("exit 4\n").ok());
  auto r = (*c)->wait(kWait);
  EXPECT_NE(r.out.find("50 132"), std::string::npos) << r.out;
  EXPECT_EQ(r.exit_code.value_or(-1), 4);
}

TEST_F(BerthdStreaming, AttachToATtyAndANonTtyContainer) {
  ready();
  auto plain = test_container("plain", image(),
                              {"/bin/sh", "-c", "while read line; do echo got-$line; echo err-$line >&2; done"});
  plain.set_stdin(true);
  std::string pid = run(plain);
  std::string url;
  ASSERT_OK(attach(pid, true, false, &url));
  // Two sessions at once; one with stdin.
  auto a = RemoteCommandClient::connect(url, {.transport = Transport::spdy, .stdin = true});
  ASSERT_TRUE(a.ok()) << a.status().message();
  std::string url2;
  ASSERT_OK(attach(pid, false, false, &url2));
  auto b = RemoteCommandClient::connect(url2, {.transport = Transport::websocket, .protocols = {"v5.channel.k8s.io"}});
  ASSERT_TRUE(b.ok()) << b.status().message();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both attached before the input
  ASSERT_TRUE((*a)->send_stdin("one\n").ok());
  EXPECT_TRUE((*a)->wait_stdout("got-one", kWait));
  EXPECT_TRUE((*b)->wait_stdout("got-one", kWait));
  (*a)->abort();  // detaching never stops the container
  (*b)->abort();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(status(pid).state(), v1::CONTAINER_RUNNING);
  EXPECT_TRUE(wait_for_file_text(logs_->path() + "/plain.log", "stderr F err-one"));

  auto term = test_container("term", image(), {"/bin/sh"});
  term.set_tty(true);
  term.set_stdin(true);
  std::string tid = run(term);
  ASSERT_OK(attach(tid, true, true, &url));
  auto t =
      RemoteCommandClient::connect(url, {.transport = Transport::spdy, .stdin = true, .stderr = false, .tty = true});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE((*t)->resize(90, 33).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE((*t)->send_stdin("\n").ok());
  ASSERT_TRUE((*t)->wait_stdout("# ", kWait));
  ASSERT_TRUE((*t)->send_stdin("stty size\n").ok());
  EXPECT_TRUE((*t)->wait_stdout("33 90", kWait));
  ASSERT_TRUE((*t)->send_stdin("exit 6\n").ok());
  auto r = (*t)->wait(kWait);
  EXPECT_TRUE(r.ended);
  auto st = wait_exited(tid);
  EXPECT_EQ(st.exit_code(), 6);
  // Attach asks what the container has.
  EXPECT_EQ(attach(tid, true, true, &url).error_code(), grpc::StatusCode::FAILED_PRECONDITION);  // exited
  auto nostdin = run(test_container("nostdin", image(), {"sleep", "1000"}));
  EXPECT_EQ(attach(nostdin, true, false, &url).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(BerthdStreaming, AStalledClientBlocksNeitherTheContainerNorOtherSessions) {
  ready();
  // Output without end, ~400 KB/s, and a marker line on every round once /tmp/go appears (the
  // monitor drops what a full attach pipe cannot take, so on a loaded machine even the reader may
  // miss a chunk; it cannot miss them all).
  std::string id = run(test_container(
      "chatty", image(),
      {"/bin/sh", "-c",
       "x=$(head -c 4000 /dev/zero | tr '\\0' c); while true; do if [ -e /tmp/go ]; then echo MARKER; fi; "
       "echo chatter-$x; sleep 0.01; done"}));
  std::string stalled_url, reader_url;
  ASSERT_OK(attach(id, false, false, &stalled_url));
  ASSERT_OK(attach(id, false, false, &reader_url));
  // With SPDY flow control the client grants window only for what it reads: this one reads
  // nothing, so the server can send it no more than its first window.
  auto stalled = RemoteCommandClient::connect(stalled_url, {.transport = Transport::spdy, .spdy_flow_control = true});
  ASSERT_TRUE(stalled.ok()) << stalled.status().message();
  auto reader = RemoteCommandClient::connect(reader_url, {.transport = Transport::spdy});
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  ASSERT_TRUE((*reader)->wait_stdout("chatter", kWait));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // long enough to fill every buffer on the way to it
  // Another session (an exec) still runs, the container still writes, the reader still reads.
  v1::ExecSyncResponse r;
  ASSERT_OK(cri_->exec_sync(id, {"touch", "/tmp/go"}, &r, 10));
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_TRUE((*reader)->wait_stdout("MARKER", kWait));
  EXPECT_TRUE(wait_for_file_text(logs_->path() + "/chatty.log", "stdout F MARKER"));
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
}

TEST_F(BerthdStreaming, PortForwardIntoThePod) {
  ready();
  // An echo server inside the pod's network namespace (busybox nc, a persistent listener).
  run(test_container("echo", image(), {"nc", "-ll", "-p", "8080", "-e", "/bin/cat"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto pf = PortForwardClient::connect(port_forward_url(),
                                       {.transport = Transport::spdy, .protocols = {"portforward.k8s.io"}});
  ASSERT_TRUE(pf.ok()) << pf.status().message();
  std::vector<PortForwardClient::Stream*> streams;
  for (int i = 0; i < 3; ++i) {
    auto s = (*pf)->open(8080);
    ASSERT_TRUE(s.ok()) << s.status().message();
    streams.push_back(*s);
  }
  auto echo = [](PortForwardClient::Stream* s, const std::string& payload) {
    std::thread writer([&] { EXPECT_TRUE(s->write(payload).ok()); });
    auto got = s->read_exact(payload.size(), kWait);
    writer.join();
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(*got == payload) << "payload of " << payload.size() << " bytes differs";
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] { echo(streams[i], random_bytes(i == 0 ? (32 << 20) : (1 << 20), i)); });
  for (auto& t : threads) t.join();
  // A port nobody listens on: the error stream says so.
  auto refused = (*pf)->open(8081);
  ASSERT_TRUE(refused.ok());
  EXPECT_NE((*refused)->error_text(kWait).find("8081"), std::string::npos);
  // WebSocket, with the ports from the request.
  auto ws = PortForwardClient::connect(port_forward_url({8080}),
                                       {.transport = Transport::websocket, .protocols = {"v4.channel.k8s.io"}}, {8080});
  ASSERT_TRUE(ws.ok()) << ws.status().message();
  auto s = (*ws)->open(8080);
  ASSERT_TRUE(s.ok());
  echo(*s, random_bytes(4 << 20, 7));
}

TEST_F(BerthdStreaming, AVanishingClientsExecIsKilled) {
  ready();
  std::string id = run(test_container("box", image(), {"sleep", "1000"}));
  std::string url =
      exec_url(id, {"/bin/sh", "-c", "echo $$ > /tmp/exec.pid; echo started; exec sleep 1000"}, false, true, true);
  auto c = RemoteCommandClient::connect(url, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE((*c)->wait_stdout("started", kWait));
  (*c)->abort();
  // The command is killed (or a zombie its container's init never reaps), not left running.
  std::string state;
  for (int i = 0; i < 100; ++i) {
    state = exec_out(id, {"/bin/sh", "-c", "grep State /proc/$(cat /tmp/exec.pid)/status 2>/dev/null || echo gone"});
    if (state.find("sleeping") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(state.find("sleeping"), std::string::npos) << state << "\n" << d_->log();
}

TEST_F(BerthdStreaming, PortForwardInAHostNetworkPod) {
  d_ = &daemon();
  cri_ = std::make_unique<CriClient>(*d_);
  pod_config_ = test_pod("hostnet");
  pod_config_.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(v1::NODE);
  ASSERT_OK(cri_->run_pod(pod_config_, &pod_));
  // A listener on the host's loopback is what a host-network pod's port is.
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  std::thread server([listener] {
    int c = ::accept(listener, nullptr, nullptr);
    const char msg[] = "host side";
    if (c >= 0) {
      (void)!::write(c, msg, sizeof msg - 1);
      ::close(c);
    }
  });
  auto pf = PortForwardClient::connect(port_forward_url(), {});
  ASSERT_TRUE(pf.ok()) << pf.status().message();
  auto s = (*pf)->open(port);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->read_to_end(kWait), "host side");
  server.join();
  ::close(listener);
}

TEST_F(BerthdStreaming, TokensAreSingleUseAndExpire) {
  ready("pod", {.config_toml = "streaming_token_ttl_seconds = 1\n"});
  std::string id = run(test_container("box", image(), {"sleep", "1000"}));
  std::string url = exec_url(id, {"true"}, false, true, true);
  auto first = run_command(url, {});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto again = RemoteCommandClient::connect(url, {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(http_status_of(again.status()), 404) << again.status().message();
  std::string late = exec_url(id, {"true"}, false, true, true);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto expired = RemoteCommandClient::connect(late, {});
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(http_status_of(expired.status()), 404) << expired.status().message();
  // The address is in verbose Status.
  v1::StatusResponse st;
  ASSERT_OK(cri_->status(&st, true));
  EXPECT_NE(url.find(nlohmann::json::parse(st.info().at("streaming"))["address"].get<std::string>()),
            std::string::npos);
}

TEST_F(BerthdStreaming, BadRequestsAndGarbage) {
  ready();
  std::string id = run(test_container("box", image(), {"sleep", "1000"}));
  grpc::ClientContext ctx;
  v1::ExecRequest req;
  req.set_container_id(id);
  v1::ExecResponse resp;
  EXPECT_EQ(cri_->runtime().Exec(&ctx, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);  // no cmd
  req.add_cmd("true");
  grpc::ClientContext ctx2;
  EXPECT_EQ(cri_->runtime().Exec(&ctx2, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);  // no streams
  req.set_tty(true);
  req.set_stdout(true);
  req.set_stderr(true);
  grpc::ClientContext ctx3;
  EXPECT_EQ(cri_->runtime().Exec(&ctx3, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);  // tty + stderr
  // Garbage on an upgraded connection ends that session; the daemon and others go on.
  std::string url = exec_url(id, {"sleep", "1000"}, false, true, true);
  auto c = RemoteCommandClient::connect(url, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE((*c)->send_raw(std::string(64, '\xff')).ok());
  EXPECT_TRUE((*c)->wait(kWait).ended);
  auto ok = run_command(exec_url(id, {"echo", "still here"}, false, true, true), {});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->out, "still here\n");
  // An exec in a stopped container is refused by the rpc.
  ASSERT_OK(cri_->stop_container(id, 0));
  grpc::ClientContext ctx4;
  v1::ExecRequest stopped;
  stopped.set_container_id(id);
  stopped.add_cmd("true");
  stopped.set_stdout(true);
  grpc::Status s = cri_->runtime().Exec(&ctx4, stopped, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
}

TEST_F(BerthdStreaming, PingFloodsLeaveBerthdsMemoryAlone) {
  ready();
  std::string id = run(test_container("box", image(), {"sleep", "1000"}));
  auto warm = run_command(exec_url(id, {"true"}, false, true, true), {});
  ASSERT_TRUE(warm.ok()) << warm.status().message();
  const pid_t berthd = d_->pid();
  const uint64_t before = vm_rss_kib(berthd);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> peak{before};
  std::thread sampler([&] {
    while (!done) {
      peak = std::max<uint64_t>(peak, vm_rss_kib(berthd));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  // Clients that open an exec, then send PINGs (SPDY) or pings (WebSocket) without ever reading
  // the answers, one after another.
  for (int round = 0; round < 8; ++round) {
    for (bool websocket : {false, true}) {
      std::string pid_file = "/tmp/flood-" + std::to_string(round) + (websocket ? "w" : "s") + ".pid";
      std::string url =
          exec_url(id, {"/bin/sh", "-c", "echo $$ > " + pid_file + "; exec sleep 2000"}, true, true, true);
      auto peer = websocket ? HostilePeer::websocket(url, "v5.channel.k8s.io")  //
                            : HostilePeer::spdy(url, "v4.channel.k8s.io");
      ASSERT_TRUE(peer.ok()) << peer.status().message();
      if (!websocket) {
        ASSERT_TRUE((*peer)->open_command_streams(true, true, true).ok());
      }
      auto f = (*peer)->flood(websocket ? HostilePeer::ws_frame(0x9, std::string(125, 'p')) : HostilePeer::spdy_ping(1),
                              1ull << 30, kWait);
      EXPECT_TRUE(f.cut_off) << f.how << " after " << f.sent << " bytes";
      EXPECT_LT(f.sent, 64ull << 20);
    }
  }
  // The floods' execs are killed, as for clients that vanished.
  std::string alive;
  for (int i = 0; i < 200; ++i) {
    alive = exec_out(id, {"/bin/sh", "-c",
                          "for f in /tmp/flood-*.pid; do "
                          "grep -q sleeping /proc/$(cat $f)/status 2>/dev/null && echo $f; done; true"});
    if (alive.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(alive, "");
  auto still = run_command(exec_url(id, {"echo", "still here"}, false, true, true), {});
  ASSERT_TRUE(still.ok()) << still.status().message();
  EXPECT_EQ(still->out, "still here\n");
  done = true;
  sampler.join();
  const uint64_t after = vm_rss_kib(berthd);
  std::printf("  [berthd VmRSS: before %.1f MiB, peak %.1f MiB, after %.1f MiB]\n", double(before) / 1024,
              double(peak) / 1024, double(after) / 1024);
  if (!berthd_sanitized()) {  // a sanitizer's quarantine keeps freed memory resident
    EXPECT_LT(peak - before, 64u * 1024) << "KiB of growth during the floods";
    EXPECT_LT(std::max(after, before) - before, 64u * 1024) << "KiB of growth after the floods";
  }
}

}  // namespace
}  // namespace berth::test
