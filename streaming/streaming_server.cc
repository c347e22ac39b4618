// StreamingServer: the listener, the io threads and worker pools, URL registration and shutdown.
// Nothing is persisted; a restart invalidates every outstanding URL. A thread that cannot be
// started makes start() fail; it never throws.
#include "berth/streaming_server.h"
#include "berth/cloexec_acceptor.h"
#include "berth/host_port.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <system_error>
#include <thread>

#include "http_router.h"
#include "server_context.h"
#include "token_store.h"

namespace berth {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace streaming;

namespace {

// Writing to a pipe whose reader is gone raises SIGPIPE in the writing thread; the server's
// threads keep it blocked so such writes just fail with EPIPE.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SigpipeBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

Result<tcp::endpoint> parse_address(const std::string& address) {
  auto hp = parse_host_port(address, "streaming address");
  if (!hp.ok()) return hp.status();
  boost::system::error_code ec;
  auto ip = boost::asio::ip::make_address(hp->host, ec);
  if (ec) return invalid_argument("streaming address '" + address + "': '" + hp->host + "' is not an IP address");
  return tcp::endpoint(ip, hp->port);
}

Status check_stdio(bool tty, bool in, bool out, bool err) {
  if (tty && err) return invalid_argument("tty and stderr cannot both be true");
  if (!in && !out && !err) return invalid_argument("one of stdin, stdout or stderr must be set");
  return ok_status();
}

}  // namespace

struct StreamingServer::Impl {
  Impl(StreamingServerConfig cfg, StreamingBackend& backend)
      : ctx{backend, workers, connectors, cfg, {}, {}, {}, {}},
        tokens(cfg.token_ttl, cfg.max_tokens),
        acceptor(asio::make_strand(ioc)) {
    ctx.idle_timeout_ms = cfg.idle_timeout.count();
  }

  asio::io_context ioc;
  WorkerPool workers, connectors;
  ServerContext ctx;
  TokenStore tokens;
  // On a strand of its own: with several io threads, the accept loop's wake and the close at
  // shutdown would otherwise run at once on two of them.
  tcp::acceptor acceptor;
  std::string bound, base_url;
  std::vector<std::thread> threads;

  void accept() {
    accept_cloexec(
        acceptor, [this] { return tcp::socket(asio::make_strand(ioc)); },
        [this](tcp::socket socket) {
          boost::system::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          serve_http(ctx, tokens, std::move(socket));
        });
  }

  Result<std::string> add(PendingRequest req) {
    const char* path = kind_path(req.kind);
    auto token = tokens.insert(std::move(req));
    if (!token.ok()) return token.status();
    return base_url + "/" + path + "/" + *token;
  }
};

Result<std::unique_ptr<StreamingServer>> StreamingServer::start(StreamingServerConfig config,
                                                                StreamingBackend& backend) {
  auto endpoint = parse_address(config.address);
  if (!endpoint.ok()) return endpoint.status();
  SigpipeBlocked blocked;  // inherited by the pool's and the io threads
  auto impl = std::make_unique<Impl>(config, backend);
  boost::system::error_code ec;
  ec = open_cloexec(impl->acceptor, endpoint->protocol());
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(*endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status(Code::unavailable, "streaming server " + config.address + ": " + ec.message());
  auto local = impl->acceptor.local_endpoint();
  impl->bound = (local.address().is_v6() ? "[" + local.address().to_string() + "]" : local.address().to_string()) +
                ":" + std::to_string(local.port());
  impl->base_url = config.base_url.empty() ? "http://" + impl->bound : config.base_url;
  while (!impl->base_url.empty() && impl->base_url.back() == '/') impl->base_url.pop_back();
  if (auto s = impl->workers.start(std::max(1, config.worker_threads), "streaming worker"); !s.ok()) return s;
  if (auto s = impl->connectors.start(std::max(1, config.connect_threads), "port-forward connect"); !s.ok()) return s;
  impl->accept();
  for (int i = 0; i < std::max(1, config.io_threads); ++i) {
    try {
      impl->threads.emplace_back([i = impl.get()] { i->ioc.run(); });
    } catch (const std::system_error& e) {
      impl->ioc.stop();
      for (auto& t : impl->threads) t.join();
      return Status(Code::resource_exhausted, std::string("cannot start the streaming io threads: ") + e.what());
    }
  }
  spdlog::info("streaming server listening on {}", impl->bound);
  return std::unique_ptr<StreamingServer>(new StreamingServer(std::move(impl)));
}

StreamingServer::StreamingServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StreamingServer::~StreamingServer() {
  asio::post(impl_->acceptor.get_executor(), [i = impl_.get()] {
    boost::system::error_code ignored;
    i->acceptor.close(ignored);
  });
  // Abort every session (which cancels running processes on the workers) and give the
  // cancellations and backend calls in flight a moment to finish before the threads stop.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  impl_->ctx.registry.abort_all();
  while ((impl_->ctx.registry.active() > 0 || impl_->ctx.pending_work > 0) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->workers.join();
  impl_->connectors.join();
}

const std::string& StreamingServer::address() const { return impl_->bound; }

Result<std::string> StreamingServer::register_exec(ExecTarget target) {
  if (target.container_id.empty()) return invalid_argument("missing required container_id");
  if (target.cmd.empty()) return invalid_argument("missing required cmd");
  if (auto s = check_stdio(target.tty, target.stdin, target.stdout, target.stderr); !s.ok()) return s;
  PendingRequest req;
  req.kind = SessionKind::exec;
  req.exec = std::move(target);
  return impl_->add(std::move(req));
}

Result<std::string> StreamingServer::register_attach(AttachTarget target) {
  if (target.container_id.empty()) return invalid_argument("missing required container_id");
  if (auto s = check_stdio(target.tty, target.stdin, target.stdout, target.stderr); !s.ok()) return s;
  PendingRequest req;
  req.kind = SessionKind::attach;
  req.attach = std::move(target);
  return impl_->add(std::move(req));
}

Result<std::string> StreamingServer::register_port_forward(std::string sandbox_id, std::vector<int32_t> ports) {
  if (sandbox_id.empty()) return invalid_argument("missing required pod_sandbox_id");
  for (int32_t p : ports)
    if (p < 1 || p > 65535) return invalid_argument("port " + std::to_string(p) + " is not 1-65535");
  PendingRequest req;
  req.kind = SessionKind::port_forward;
  req.sandbox_id = std::move(sandbox_id);
  req.ports = std::move(ports);
  return impl_->add(std::move(req));
}

size_t StreamingServer::active_sessions() const { return impl_->ctx.registry.active(); }

void StreamingServer::set_timeouts(std::chrono::milliseconds token_ttl, std::chrono::milliseconds idle_timeout) {
  impl_->tokens.set_ttl(token_ttl);
  impl_->ctx.idle_timeout_ms = idle_timeout.count();
}

}  // namespace berth
