// One io_context thread, async accept and one short HTTP/1.1 exchange per connection; a client
// that stalls is cut off by the stream timeout instead of holding the endpoint.
#include "berth/metrics_endpoint.h"
#include "berth/host_port.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

namespace berth {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(tcp::socket socket, const MetricsRegistry& registry) : stream_(std::move(socket)), registry_(registry) {}

  void run() {
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) return;
    response_.version(request_.version());
    response_.keep_alive(false);
    std::string_view target(request_.target().data(), request_.target().size());
    std::string_view path = target.substr(0, target.find('?'));
    if (path != "/metrics") {
      response_.result(http::status::not_found);
      response_.set(http::field::content_type, "text/plain");
      response_.body() = "not found: berthd serves /metrics\n";
    } else if (request_.method() != http::verb::get && request_.method() != http::verb::head) {
      response_.result(http::status::method_not_allowed);
      response_.set(http::field::allow, "GET, HEAD");
    } else {
      response_.result(http::status::ok);
      response_.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      if (request_.method() == http::verb::get) response_.body() = registry_.render();
    }
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream stream_;
  const MetricsRegistry& registry_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

}  // namespace

struct MetricsEndpoint::Impl {
  Impl(const MetricsRegistry& r) : registry(r), acceptor(ioc) {}
  const MetricsRegistry& registry;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  std::string bound;
  std::thread thread;

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) std::make_shared<Exchange>(std::move(socket), registry)->run();
      accept();
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
  impl->acceptor.open(endpoint->protocol(), ec);
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
