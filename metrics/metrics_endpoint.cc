// One io_context thread, async accept and one short HTTP/1.1 exchange per connection. Like the
// streaming server's, its limits keep a client from holding the endpoint or berthd's memory: an
// exchange has kExchangeTimeout in all, a request kMaxHeaderBytes of header and no body to speak
// of, and past kMaxConnections at once a new connection is closed unanswered.
#include "berth/metrics_endpoint.h"
#include "berth/cloexec_acceptor.h"
#include "berth/host_port.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <atomic>
#include <thread>

namespace berth {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kExchangeTimeout = std::chrono::seconds(10);
constexpr size_t kMaxHeaderBytes = 8 * 1024;
constexpr size_t kMaxBodyBytes = 1024;
constexpr int kMaxConnections = 16;

class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(tcp::socket socket, const MetricsRegistry& registry, std::atomic<int>& connections)
      : connections_(connections),
        stream_(std::move(socket)),
        registry_(registry),
        buffer_(kMaxHeaderBytes + kMaxBodyBytes) {
    ++connections_;
  }
  ~Exchange() { --connections_; }

  void run() {
    stream_.expires_after(kExchangeTimeout);
    parser_.header_limit(kMaxHeaderBytes);
    parser_.body_limit(kMaxBodyBytes);
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) return;
    const auto& request = parser_.get();
    response_.version(request.version());
    response_.keep_alive(false);
    std::string_view target(request.target().data(), request.target().size());
    std::string_view path = target.substr(0, target.find('?'));
    if (path != "/metrics") {
      response_.result(http::status::not_found);
      response_.set(http::field::content_type, "text/plain");
      response_.body() = "not found: berthd serves /metrics\n";
    } else if (request.method() != http::verb::get && request.method() != http::verb::head) {
      response_.result(http::status::method_not_allowed);
      response_.set(http::field::allow, "GET, HEAD");
    } else {
      response_.result(http::status::ok);
      response_.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      if (request.method() == http::verb::get) response_.body() = registry_.render();
    }
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  std::atomic<int>& connections_;  // the endpoint's count of open exchanges
  beast::tcp_stream stream_;
  const MetricsRegistry& registry_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

struct MetricsEndpoint::Impl {
  Impl(const MetricsRegistry& r) : registry(r), acceptor(ioc) {}
  const MetricsRegistry& registry;
  std::atomic<int> connections{0};  // before ioc: exchanges it still holds go with it
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::string bound;
  std::thread thread;

  void accept() {
    accept_cloexec(
        acceptor, [this] { return tcp::socket(ioc); },
        [this](tcp::socket socket) {
          if (connections >= kMaxConnections) return;  // closed unanswered
          std::make_shared<Exchange>(std::move(socket), registry, connections)->run();
        });
  }
};

static Result<tcp::endpoint> parse_address(const std::string& address) {
  auto hp = parse_host_port(address, "metrics address");
  if (!hp.ok()) return hp.status();
  boost::system::error_code ec;
  auto ip = boost::asio::ip::make_address(hp->host, ec);
  if (ec) return invalid_argument("metrics address '" + address + "': '" + hp->host + "' is not an IP address");
  return tcp::endpoint(ip, hp->port);
}

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::start(const std::string& address,
                                                                const MetricsRegistry& registry) {
  auto endpoint = parse_address(address);
  if (!endpoint.ok()) return endpoint.status();
  auto impl = std::make_unique<Impl>(registry);
  beast::error_code ec;
  ec = open_cloexec(impl->acceptor, endpoint->protocol());
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(*endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status(Code::unavailable, "metrics endpoint " + address + ": " + ec.message());
  auto local = impl->acceptor.local_endpoint();
  impl->bound = (local.address().is_v6() ? "[" + local.address().to_string() + "]" : local.address().to_string()) +
                ":" + std::to_string(local.port());
  impl->accept();
  impl->thread = std::thread([i = impl.get()] { i->ioc.run(); });
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(std::move(impl)));
}

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsEndpoint::~MetricsEndpoint() {
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

const std::string& MetricsEndpoint::address() const { return impl_->bound; }

}  // namespace berth
