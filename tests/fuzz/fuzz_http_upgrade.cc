// Fuzz target: the streaming server's front door (streaming/http_router.cc) as a client reaches it:
// the input is every byte one client connection sends, read by berth's own Beast request parser
// with berth's limits, routed and token-checked by serve_http, and, when the upgrade succeeds,
// carried on into the SPDY or WebSocket session behind it. "@E", "@A", "@P" and "@Q" in the input
// stand for a valid exec, attach (tty), port-forward and port-forward-with-ports token, so the
// fuzzer can reach past the token check. The backend answers at once: exec runs a "process" that
// has already printed a line and exited, attach is refused, a port connects to a peer that says one
// word and hangs up.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <thread>

#include "fuzz_support.h"
#include "http_router.h"
#include "server_context.h"
#include "token_store.h"
#include "worker_pool.h"

namespace asio = boost::asio;
using namespace berth;
using namespace berth::streaming;

namespace {

UniqueFd pipe_with(std::string_view bytes, bool read_end) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) abort();
  if (!bytes.empty() && write(p[1], bytes.data(), bytes.size()) != ssize_t(bytes.size())) abort();
  if (read_end) {
    close(p[1]);
    return UniqueFd(p[0]);
  }
  close(p[0]);  // stdin goes nowhere: the pump sees EPIPE, as when a process closed its stdin
  return UniqueFd(p[1]);
}

class QuickBackend : public StreamingBackend {
 public:
  Result<StreamIo> exec(const ExecTarget& t) override {
    StreamIo io;
    if (t.stdin) io.stdin_fd = pipe_with("", false);
    if (t.stdout) io.stdout_fd = pipe_with("hello from the container\n", true);
    if (t.stderr) io.stderr_fd = pipe_with("a warning\n", true);
    io.done_fd = pipe_with("", true);  // end of file: readable, the process is over
    io.resize = [](uint16_t, uint16_t) {};
    io.outcome = [] { return Result<int>(3); };
    io.cancel = [] {};
    return io;
  }
  Result<StreamIo> attach(const AttachTarget&) override { return Status(Code::not_found, "container is gone"); }
  Result<UniqueFd> connect_port(const std::string&, int32_t port) override {
    if (port == 81) return Status(Code::unavailable, "connection refused");
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) abort();
    if (write(sv[1], "pong", 4) != 4) abort();
    close(sv[1]);
    return UniqueFd(sv[0]);
  }
};

std::string with_tokens(std::string text, TokenStore& tokens) {
  auto insert = [&](PendingRequest r) {
    auto t = tokens.insert(std::move(r));
    if (!t.ok()) abort();
    return *t;
  };
  PendingRequest exec;
  exec.kind = SessionKind::exec;
  exec.exec = ExecTarget{"c1", {"sh"}, false, true, true, true};
  PendingRequest attach;
  attach.kind = SessionKind::attach;
  attach.attach = AttachTarget{"c1", true, true, true, false};
  PendingRequest forward;
  forward.kind = SessionKind::port_forward;
  forward.sandbox_id = "s1";
  PendingRequest forward_ports = forward;
  forward_ports.ports = {80, 81};
  const std::pair<const char*, std::string> marks[] = {
      {"@E", insert(exec)}, {"@A", insert(attach)}, {"@P", insert(forward)}, {"@Q", insert(forward_ports)}};
  for (const auto& [mark, token] : marks) {
    for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + token.size()))
      text.replace(at, 2, token);
  }
  return text;
}

}  // namespace

BERTH_FUZZ_TARGET(http_upgrade) {
  static QuickBackend backend;
  // One thread each, kept for the process: the server's pools, small.
  static WorkerPool* pools = [] {
    signal(SIGPIPE, SIG_IGN);  // as in berthd: a write to a gone peer is EPIPE, not death
    spdlog::set_level(spdlog::level::off);
    auto* p = new WorkerPool[2];
    if (!p[0].start(1, "worker").ok() || !p[1].start(1, "connect").ok()) abort();
    return p;
  }();

  StreamingServerConfig cfg;
  // No idle timeout (the client's hang-up ends it); the other waits expire at once, so that a
  // run is over when nothing is ready to run.
  cfg.idle_timeout = std::chrono::milliseconds(0);
  cfg.stream_creation_timeout = std::chrono::milliseconds(0);
  cfg.output_drain_quiet = std::chrono::milliseconds(0);
  cfg.tty_size_wait = std::chrono::milliseconds(0);
  ServerContext ctx{backend, pools[0], pools[1], cfg, {}, {}, {}};
  TokenStore tokens(std::chrono::minutes(1), 16);
  std::string bytes = with_tokens(std::string(reinterpret_cast<const char*>(data), size), tokens);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) abort();
  UniqueFd client(sv[1]);
  // What does not fit the socket buffer is cut: the client's stream is as long as it is.
  ssize_t sent = bytes.empty() ? 0 : send(client.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  (void)sent;
  {
    asio::io_context ioc;
    asio::ip::tcp::socket socket(asio::make_strand(ioc));
    socket.assign(asio::ip::tcp::v4(), sv[0]);
    serve_http(ctx, tokens, std::move(socket));
    // The client stays connected (reading everything) until the server has nothing left to do
    // with what it sent, as kubectl waits for the exit status; then it hangs up. The run ends
    // when every connection has ended and no backend call is in flight; a connection that does
    // not end after its client has gone is a finding (libFuzzer reports the hang).
    bool hung_up = false;
    for (;;) {
      berth::fuzz::drain(client.get());
      if (ioc.poll_one() > 0) continue;
      if (ctx.pending_work > 0) {
        ioc.restart();
        ioc.run_one_for(std::chrono::milliseconds(1));
        continue;
      }
      if (!hung_up) {
        shutdown(client.get(), SHUT_WR);
        hung_up = true;
        ioc.restart();
        continue;
      }
      if (ioc.run_one_for(std::chrono::milliseconds(2)) > 0) continue;
      if (ioc.stopped() && ctx.pending_work == 0) break;
      ioc.restart();
    }
    FUZZ_CHECK(ctx.registry.active() == 0 && ctx.pending_requests == 0);
  }
  return 0;
}
