// Exec and attach through the streaming server end to end, over SPDY/3.1 and WebSocket as
// kubectl, crictl and kubelet speak them; tokens, refusals, garbage, vanishing clients, timeouts,
// and hostile clients (floods of frames that need replies, output nobody reads).
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstdio>

#include "berth/test/hostile_peer.h"
#include "streaming_fixture.h"

using namespace berth;
using namespace berth::test;

namespace {

TEST_F(StreamingTest, AddressAndUrls) {
  EXPECT_EQ(server_->address().rfind("127.0.0.1:", 0), 0u);
  auto url = server_->register_port_forward("host");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->rfind("http://" + server_->address() + "/portforward/", 0), 0u);
  EXPECT_EQ(server_->register_exec({"", {"true"}, false, false, true, false}).status().code(), Code::invalid_argument);
  EXPECT_EQ(server_->register_exec({"c", {"true"}, true, false, true, true}).status().code(), Code::invalid_argument);
  EXPECT_EQ(server_->register_attach({"c", false, false, false, false}).status().code(), Code::invalid_argument);
  EXPECT_EQ(server_->register_port_forward("").status().code(), Code::invalid_argument);
}

TEST_F(StreamingTest, ExecOverSpdyVersions) {
  for (std::string v : {"v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io"}) {
    SCOPED_TRACE(v);
    auto r = run_command(sh("echo out; echo err >&2; exit 3"), spdy(v));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->ended);
    EXPECT_EQ(r->out, "out\n");
    EXPECT_EQ(r->err, "err\n");
    if (v[1] >= '4') {
      EXPECT_EQ(r->exit_code, 3);
      EXPECT_NE(r->error_stream.find("\"reason\":\"NonZeroExitCode\""), std::string::npos);
    } else {
      EXPECT_EQ(r->error_stream, "command terminated with non-zero exit code: exit status 3");
    }
    auto ok = run_command(sh("echo fine"), spdy(v));
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(ok->out, "fine\n");
    EXPECT_EQ(ok->error_stream, v[1] >= '4' ? R"({"metadata":{},"status":"Success"})" : "");
  }
}

TEST_F(StreamingTest, SpdyNegotiationPicksTheClientsPreference) {
  auto c = RemoteCommandClient::connect(sh("true"), [] {
    StreamOptions o;
    o.protocols = {"v9.channel.k8s.io", "v3.channel.k8s.io", "v4.channel.k8s.io"};
    return o;
  }());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)->protocol(), "v3.channel.k8s.io");
  EXPECT_TRUE((*c)->wait(kWait).ended);
  auto refused = RemoteCommandClient::connect(sh("true"), spdy("v9.channel.k8s.io"));
  EXPECT_EQ(http_status_of(refused.status()), 403);
}

TEST_F(StreamingTest, ExecOverWebSocketSubprotocols) {
  for (std::string p : {"v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io", "base64.channel.k8s.io",
                        "channel.k8s.io"}) {
    SCOPED_TRACE(p);
    auto c = RemoteCommandClient::connect(sh("echo out; echo err >&2; exit 3"), websocket({p}));
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ((*c)->protocol(), p);
    auto r = (*c)->wait(kWait);
    EXPECT_TRUE(r.ended);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
    if (p.rfind("v4.", 0) == 0 || p.rfind("v5.", 0) == 0) {
      EXPECT_EQ(r.exit_code, 3);
    } else {
      EXPECT_EQ(r.error_stream, "command terminated with non-zero exit code: exit status 3");
    }
  }
  // No subprotocol at all: binary channels, as kubelet does.
  auto none = run_command(sh("echo x"), websocket({}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->out, "x\n");
  EXPECT_EQ(http_status_of(RemoteCommandClient::connect(sh("true"), websocket({"v9.channel.k8s.io"})).status()), 403);
}

TEST_F(StreamingTest, StdinEchoAndHalfClose) {
  std::string big = pseudo_random(1 << 20, 1);
  struct Case {
    StreamOptions o;
    const char* name;
  };
  StreamOptions go_like = spdy("v4.channel.k8s.io");
  go_like.spdy_flow_control = false;
  for (auto [o, name] : {Case{spdy("v4.channel.k8s.io"), "spdy"}, Case{go_like, "spdy-without-flow-control"},
                         Case{websocket({"v5.channel.k8s.io"}), "websocket-v5"}}) {
    SCOPED_TRACE(name);
    o.stdin = true;
    auto r = run_command(exec_url({"cat"}, true, true, true), o, "hello\n");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->out, "hello\n");
    EXPECT_EQ(r->exit_code, 0);
    auto c = RemoteCommandClient::connect(exec_url({"cat"}, true, true, true), o);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->send_stdin(big).ok());
    ASSERT_TRUE((*c)->close_stdin().ok());
    auto rb = (*c)->wait(kWait);
    EXPECT_TRUE(rb.ended);
    EXPECT_TRUE(rb.out == big) << "got " << rb.out.size() << " bytes";
    EXPECT_EQ((*c)->window_violations(), 0u);
  }
}

TEST_F(StreamingTest, LargeOutputHonoursTheClientsWindows) {
  auto c = RemoteCommandClient::connect(sh("head -c 3000000 /dev/zero"), spdy("v4.channel.k8s.io"));
  ASSERT_TRUE(c.ok());
  std::this_thread::sleep_for(200ms);  // let the server run into the window before reading
  auto r = (*c)->wait(kWait);
  EXPECT_EQ(r.out.size(), 3000000u);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ((*c)->window_violations(), 0u);
}

TEST_F(StreamingTest, LargeOutputToAClientWithoutFlowControl) {
  // Go's spdystream never sends WINDOW_UPDATE: the server must not stall after 64 KiB.
  StreamOptions o = spdy("v4.channel.k8s.io");
  o.spdy_flow_control = false;
  auto r = run_command(sh("head -c 3000000 /dev/zero; echo done >&2"), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.size(), 3000000u);
  EXPECT_EQ(r->err, "done\n");
  EXPECT_EQ(r->exit_code, 0);
}

// A SPDY/3 control frame written here byte by byte: version 3, a type, no flags, two 32-bit words.
std::string spdy_control(uint8_t type, uint32_t a, uint32_t b) {
  std::string f = {'\x80', '\x03', '\x00', static_cast<char>(type), '\x00', '\x00', '\x00', '\x08'};
  for (uint32_t w : {a, b})
    for (int shift : {24, 16, 8, 0}) f.push_back(static_cast<char>((w >> shift) & 0xff));
  return f;
}

TEST_F(StreamingTest, ClientGoAwayAndStreamResetAreHonoured) {
  StreamOptions o = spdy("v4.channel.k8s.io");
  o.stdin = true;
  auto c = RemoteCommandClient::connect(exec_url({"cat"}, true, true, true), o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // GOAWAY (type 7, last stream 0, status OK): the client opens nothing more; open streams go on.
  ASSERT_TRUE((*c)->send_raw(spdy_control(7, 0, 0)).ok());
  ASSERT_TRUE((*c)->send_stdin("before the reset\n").ok());
  ASSERT_TRUE((*c)->wait_stdout("before the reset", kWait));
  // RST_STREAM (type 3) of stdin, the client's second stream (id 3; error is 1), status CANCEL (5):
  // the process sees the end of its input, ends, and its exit still reaches the client.
  ASSERT_TRUE((*c)->send_raw(spdy_control(3, 3, 5)).ok());
  auto r = (*c)->wait(kWait);
  EXPECT_TRUE(r.ended);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "before the reset\n");
}

TEST_F(StreamingTest, PingIsAnswered) {
  auto c = RemoteCommandClient::connect(sh("echo started; exec sleep 1000"), spdy("v4.channel.k8s.io"));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->wait_stdout("started", kWait));
  EXPECT_TRUE((*c)->ping(kWait).ok());
  EXPECT_TRUE((*c)->ping(kWait).ok());
  (*c)->abort();
  EXPECT_TRUE(eventually([&] { return backend_.cancelled() == 1; }));
}

TEST_F(StreamingTest, IdleSessionsTimeOut) {
  StreamingServerConfig cfg;
  cfg.idle_timeout = 300ms;
  start(cfg);
  for (auto o : {spdy("v4.channel.k8s.io"), websocket({"v5.channel.k8s.io"})}) {
    auto c = RemoteCommandClient::connect(sh("echo started; exec sleep 1000"), o);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->wait_stdout("started", kWait));
    EXPECT_TRUE((*c)->wait(kWait).ended);
  }
  EXPECT_TRUE(eventually([&] { return backend_.cancelled() == 2; }));
}

TEST_F(StreamingTest, TtyResizeReachesTheTerminal) {
  for (auto o : {spdy("v4.channel.k8s.io"), websocket({"v5.channel.k8s.io"})}) {
    o.stdin = o.tty = true;
    o.stderr = false;
    auto c = RemoteCommandClient::connect(
        exec_url({"/bin/sh", "-c", "stty size; read x; stty size"}, true, true, false, true), o);
    ASSERT_TRUE(c.ok()) << c.status().message();
    // The first size (sent at once, as clients do) is the terminal's size from the start.
    ASSERT_TRUE((*c)->resize(100, 40).ok());
    ASSERT_TRUE((*c)->wait_stdout("40 100", kWait));
    ASSERT_TRUE((*c)->resize(120, 50).ok());
    ASSERT_TRUE((*c)->send_stdin("go\n").ok());
    auto r = (*c)->wait(kWait);
    EXPECT_NE(r.out.find("50 120"), std::string::npos) << r.out;
    EXPECT_EQ(r.exit_code, 0);
  }
}

TEST_F(StreamingTest, AttachReportsSuccessWhateverTheExitCode) {
  backend_.set_attach_command("app", {"/bin/sh", "-c", "echo attached; exit 5"});
  auto url = server_->register_attach({"app", false, false, true, true});
  ASSERT_TRUE(url.ok());
  auto r = run_command(*url, spdy("v4.channel.k8s.io"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "attached\n");
  EXPECT_EQ(r->exit_code, 0);
  auto gone = server_->register_attach({"nope", false, false, true, true});
  auto rg = run_command(*gone, websocket({"v5.channel.k8s.io"}));
  ASSERT_TRUE(rg.ok());
  EXPECT_NE(rg->error_stream.find("InternalError"), std::string::npos) << rg->error_stream;
}

TEST_F(StreamingTest, ExecThatCannotStartReportsAnInternalError) {
  auto r = run_command(exec_url({"/no/such/program"}, false, true, true), spdy("v4.channel.k8s.io"));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->error_stream.find("\"reason\":\"InternalError\""), std::string::npos) << r->error_stream;
  EXPECT_FALSE(r->exit_code.has_value());
}

TEST_F(StreamingTest, ExpiredReusedAndUnknownTokensAre404) {
  StreamingServerConfig cfg;
  cfg.token_ttl = 50ms;
  start(cfg);
  std::string expired = sh("true");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(http_status_of(RemoteCommandClient::connect(expired, spdy("v4.channel.k8s.io")).status()), 404);

  start({});
  std::string url = sh("echo once");
  auto first = run_command(url, spdy("v4.channel.k8s.io"));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->out, "once\n");
  EXPECT_EQ(http_status_of(run_command(url, spdy("v4.channel.k8s.io")).status()), 404);
  EXPECT_EQ(http_status_of(run_command(url, websocket({"v5.channel.k8s.io"})).status()), 404);
  // An exec token is no attach token.
  std::string exec = sh("true");
  std::string attach = exec;
  attach.replace(attach.find("/exec/"), 6, "/attach/");
  EXPECT_EQ(http_status_of(run_command(attach, spdy("v4.channel.k8s.io")).status()), 404);
  EXPECT_EQ(http_status_of(run_command(exec, spdy("v4.channel.k8s.io")).status()), 404);
}

TEST_F(StreamingTest, AtMostAThousandOutstandingTokens) {
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(server_->register_port_forward("host").ok()) << i;
  auto over = server_->register_exec({"c", {"true"}, false, false, true, false});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::resource_exhausted);
}

TEST_F(StreamingTest, NotAnUpgradeIs400) {
  std::string url = sh("true");
  auto c = RemoteCommandClient::connect(url, [] {
    StreamOptions o;
    o.protocols = {};  // no X-Stream-Protocol-Version
    return o;
  }());
  EXPECT_EQ(http_status_of(c.status()), 400);
}

TEST_F(StreamingTest, StreamsThatNeverComeEndTheSession) {
  StreamingServerConfig cfg;
  cfg.stream_creation_timeout = 200ms;
  start(cfg);
  StreamOptions o = spdy("v4.channel.k8s.io");
  o.stdout = false;  // the URL asks for stdout, the client never opens that stream
  auto r = run_command(sh("echo never"), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ended);
  EXPECT_EQ(r->error_stream, "");
  EXPECT_TRUE(backend_.started().empty());
}

TEST_F(StreamingTest, GarbageEndsTheSessionNotTheServer) {
  auto procs = backend_.started().size();
  StreamOptions o = spdy("v4.channel.k8s.io");
  o.stdin = true;
  auto c = RemoteCommandClient::connect(exec_url({"/bin/sh", "-c", "echo ready; exec cat"}, true, true, true), o);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->wait_stdout("ready", kWait));
  ASSERT_TRUE((*c)->send_raw(std::string(64, '\xff')).ok());
  EXPECT_TRUE((*c)->wait(kWait).ended);
  EXPECT_TRUE(eventually([&] { return backend_.cancelled() == 1; }));
  EXPECT_EQ(backend_.started().size(), procs + 1);
  // Plain text where frames belong: a data frame for a stream never opened.
  auto c2 = RemoteCommandClient::connect(exec_url({"/bin/sh", "-c", "echo ready; exec cat"}, true, true, true), o);
  ASSERT_TRUE(c2.ok());
  ASSERT_TRUE((*c2)->wait_stdout("ready", kWait));
  ASSERT_TRUE((*c2)->send_raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n").ok());
  EXPECT_TRUE((*c2)->wait(kWait).ended);
  EXPECT_TRUE(eventually([&] { return backend_.cancelled() == 2; }));
  // The server goes on.
  auto r = run_command(sh("echo still here"), spdy("v4.channel.k8s.io"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "still here\n");
}

// A raw WebSocket upgrade followed by bytes that are no WebSocket frame at all.
TEST_F(StreamingTest, WebSocketGarbageEndsTheSession) {
  std::string url = exec_url({"/bin/sh", "-c", "exec sleep 1000"}, true, true, true);
  std::string path = url.substr(url.find('/', 7));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(uint16_t(std::stoi(server_->address().substr(server_->address().rfind(':') + 1))));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::string req = "GET " + path +
                    " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                    "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), ssize_t(req.size()));
  std::string in;
  char buf[4096];
  while (in.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0);
    in.append(buf, size_t(n));
  }
  EXPECT_EQ(in.rfind("HTTP/1.1 101", 0), 0u) << in;
  EXPECT_TRUE(eventually([&] { return backend_.started().size() == 1; }));
  std::string garbage(256, '\xff');
  ASSERT_EQ(::send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL), ssize_t(garbage.size()));
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) {
  }
  ::close(fd);
  EXPECT_TRUE(eventually([&] { return backend_.cancelled() == 1; }));
  auto r = run_command(sh("echo still here"), websocket({"v5.channel.k8s.io"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "still here\n");
}

TEST_F(StreamingTest, ClientThatVanishesCancelsTheProcess) {
  int cancelled = 0;
  for (auto o : {spdy("v4.channel.k8s.io"), websocket({"v5.channel.k8s.io"})}) {
    auto c = RemoteCommandClient::connect(sh("echo started; exec sleep 1000"), o);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->wait_stdout("started", kWait));
    pid_t pid = backend_.started().back();
    (*c)->abort();
    ++cancelled;
    EXPECT_TRUE(eventually([&] { return backend_.cancelled() == cancelled; }));
    EXPECT_TRUE(eventually([&] { return ::kill(pid, 0) != 0; })) << "pid " << pid << " still runs";
  }
}

// A flood may send this much before the test gives up on the server cutting it off.
constexpr uint64_t kFloodLimit = 1ull << 30;
// What a cut-off client may have got in: the write-queue cap (4 MiB of unread replies) plus the
// kernel's socket buffers both ways, generously.
constexpr uint64_t kAcceptedBound = 64ull << 20;

// Floods `unit` from `peer` while another exec runs; the flooder is cut off, the exec is not.
void flood_while_another_exec_runs(HostilePeer& peer, const std::string& unit, const std::string& other) {
  HostilePeer::Flood f;
  std::thread flooder([&] { f = peer.flood(unit, kFloodLimit, kWait); });
  auto r = run_command(other, spdy("v4.channel.k8s.io"));
  flooder.join();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "meanwhile\n");
  EXPECT_TRUE(f.cut_off) << f.how << " after " << f.sent << " bytes";
  EXPECT_LT(f.sent, kAcceptedBound);
  std::printf("  [flood of %zu-byte frames: %.1f MiB sent, %s]\n", unit.size(), double(f.sent) / (1 << 20),
              f.how.c_str());
}

TEST_F(StreamingTest, ClientsThatFloodRepliesAndNeverReadAreCutOff) {
  struct Case {
    const char* name;
    bool websocket;
    std::string unit;
  };
  // SPDY: PINGs (12 bytes, a 12-byte reply each) and empty DATA frames on the stdin stream the
  // client already closed (8 bytes, a 16-byte RST_STREAM each); WebSocket: pings with 125 bytes of
  // payload (Beast pongs each).
  for (const auto& c : {Case{"spdy ping", false, HostilePeer::spdy_ping(1)},
                        Case{"spdy data on a closed stream", false, HostilePeer::spdy_data(3, 0, "")},
                        Case{"websocket ping", true, HostilePeer::ws_frame(0x9, std::string(125, 'p'))}}) {
    SCOPED_TRACE(c.name);
    size_t procs = backend_.started().size();
    int cancelled = backend_.cancelled();
    std::string url = exec_url({"/bin/sh", "-c", "exec sleep 1000"}, true, true, true);
    auto peer = c.websocket ? HostilePeer::websocket(url, "v5.channel.k8s.io")  //
                            : HostilePeer::spdy(url, "v4.channel.k8s.io");
    ASSERT_TRUE(peer.ok()) << peer.status().message();
    if (!c.websocket) {
      ASSERT_TRUE((*peer)->open_command_streams(true, true, true).ok());
      ASSERT_TRUE((*peer)->send(HostilePeer::spdy_data(3, 1, "")).ok());  // FIN on stdin
    }
    ASSERT_TRUE(eventually([&] { return backend_.started().size() == procs + 1; }));
    pid_t pid = backend_.started().back();
    flood_while_another_exec_runs(**peer, c.unit, sh("echo meanwhile"));
    // The flooder's exec is killed as for a client that vanished.
    EXPECT_TRUE(eventually([&] { return backend_.cancelled() == cancelled + 1; }));
    EXPECT_TRUE(eventually([&] { return ::kill(pid, 0) != 0; })) << "pid " << pid << " still runs";
  }
}

TEST_F(StreamingTest, OutputNobodyReadsWaitsInThePipe) {
  // `cat /dev/zero` writes as fast as it can; a client that reads nothing must stop it after the
  // few MiB that fit on the way (pipe, session queue, socket buffers).
  backend_.set_attach_command("zero", {"cat", "/dev/zero"});
  for (bool attach : {false, true}) {
    for (bool websocket : {false, true}) {
      SCOPED_TRACE(std::string(attach ? "attach" : "exec") + (websocket ? " over websocket" : " over spdy"));
      size_t procs = backend_.started().size();
      std::string url = attach ? *server_->register_attach({"zero", false, false, true, false})
                               : exec_url({"cat", "/dev/zero"}, false, true, false);
      auto peer = websocket ? HostilePeer::websocket(url, "v5.channel.k8s.io")  //
                            : HostilePeer::spdy(url, "v4.channel.k8s.io");
      ASSERT_TRUE(peer.ok()) << peer.status().message();
      if (!websocket) {
        ASSERT_TRUE((*peer)->open_command_streams(false, true, false).ok());
      }
      ASSERT_TRUE(eventually([&] { return backend_.started().size() == procs + 1; }));
      pid_t pid = backend_.started().back();
      std::this_thread::sleep_for(1s);  // time to fill every buffer on the way
      EXPECT_LT(bytes_written(pid), kAcceptedBound);
      std::printf("  [the process wrote %.1f MiB, then waited]\n", double(bytes_written(pid)) / (1 << 20));
      peer->reset();
      EXPECT_TRUE(eventually([&] { return ::kill(pid, 0) != 0; })) << "pid " << pid << " still runs";
    }
  }
}

TEST_F(StreamingTest, ABigDataFrameIsHandedOnAsItArrives) {
  // One 8 MiB DATA frame on stdin (a Go client writing a whole buffer does this): the server
  // passes it on in pieces instead of waiting for it whole.
  auto peer = HostilePeer::spdy(exec_url({"wc", "-c"}, true, true, true), "v4.channel.k8s.io");
  ASSERT_TRUE(peer.ok()) << peer.status().message();
  ASSERT_TRUE((*peer)->open_command_streams(true, true, true).ok());
  std::string frame = HostilePeer::spdy_data(3, 1, std::string(8 << 20, 'x'));
  std::thread writer([&] { EXPECT_TRUE((*peer)->send(frame).ok()); });
  auto in = (*peer)->read_until_closed(kWait);
  writer.join();
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_NE(in->find("8388608"), std::string::npos);
}

}  // namespace
