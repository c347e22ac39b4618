// Reads the request, consumes its token (unknown, expired, reused or of another kind: 404), and
// upgrades: WebSocket with the first subprotocol of the client's that is supported (403 when
// none), SPDY/3.1 after X-Stream-Protocol-Version negotiation (403 with the accepted versions when
// none matches), 400 for anything that is not an upgrade. The request is bounded
// (session_limits.h): a header or body too large is answered 431 or 413, and at most
// kMaxPendingRequests connections wait for their request at once.
#include "http_router.h"

#include <spdlog/spdlog.h>

#include <boost/algorithm/string/predicate.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <charconv>

#include "session_limits.h"
#include "sessions.h"
#include "ws_channel.h"

namespace berth::streaming {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

const std::vector<std::string> kCommandVersions = {"v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io",
                                                   "v2.channel.k8s.io", "channel.k8s.io"};
const std::vector<std::string> kForwardVersions = {"portforward.k8s.io"};

int command_version(const std::string& name) {
  if (name == "channel.k8s.io") return 1;
  return name[1] - '0';
}

std::vector<std::string> header_values(const http::request<http::string_body>& req, std::string_view name) {
  std::vector<std::string> out;
  for (auto [it, end] = req.equal_range(beast::string_view(name.data(), name.size())); it != end; ++it) {
    auto v = ws::split_offers(std::string_view(it->value().data(), it->value().size()));
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Values of `key` in the query string, each split at commas.
Result<std::vector<int32_t>> query_ports(std::string_view target) {
  std::vector<int32_t> ports;
  size_t q = target.find('?');
  if (q == std::string_view::npos) return ports;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (kv.substr(0, 5) != "port=") continue;
    for (auto p : ws::split_offers(kv.substr(5))) {
      int port = 0;
      auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
      if (ec != std::errc() || end != p.data() + p.size() || port < 1 || port > 65535)
        return invalid_argument("unable to parse '" + p + "' as a port");
      ports.push_back(port);
    }
  }
  return ports;
}

// The client sent something that is no HTTP request (as opposed to leaving or timing out).
bool is_parse_error(const beast::error_code& ec) {
  static const auto& http_errors = beast::error_code(http::error::bad_method).category();
  return ec.category() == http_errors && ec != http::error::end_of_stream && ec != http::error::partial_message;
}

class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  HttpExchange(ServerContext& ctx, TokenStore& tokens, tcp::socket socket)
      : ctx_(ctx), tokens_(tokens), stream_(std::move(socket)), buffer_(limits::kMaxRequestBytes) {
    ++ctx_.pending_requests;
  }
  ~HttpExchange() { --ctx_.pending_requests; }

  void run() {
    parser_.header_limit(limits::kMaxRequestHeader);
    parser_.body_limit(limits::kMaxRequestBody);
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec) return self->route();
      if (ec == http::error::header_limit || ec == http::error::buffer_overflow)
        return self->refuse(http::status::request_header_fields_too_large, "request header too large\n");
      if (ec == http::error::body_limit)
        return self->refuse(http::status::payload_too_large, "request body too large\n");
      if (is_parse_error(ec)) return self->refuse(http::status::bad_request, "malformed request\n");
    });
  }

 private:
  void route() {
    auto& req = parser_.get();
    std::string_view target(req.target().data(), req.target().size());
    std::string_view path = target.substr(0, target.find('?'));
    size_t slash = path.rfind('/');
    size_t prev = slash == std::string_view::npos || slash == 0 ? std::string_view::npos : path.rfind('/', slash - 1);
    if (prev == std::string_view::npos) return reply(http::status::not_found, "not found\n");
    std::string kind(path.substr(prev + 1, slash - prev - 1));
    std::string token(path.substr(slash + 1));
    if (kind != "exec" && kind != "attach" && kind != "portforward")
      return reply(http::status::not_found, "not found\n");
    if (req.method() != http::verb::get && req.method() != http::verb::post)
      return reply(http::status::method_not_allowed, "method not allowed\n");
    auto pending = tokens_.consume(token);
    if (!pending || kind != kind_path(pending->kind)) return reply(http::status::not_found, "not found\n");
    request_ = std::move(*pending);

    if (beast::websocket::is_upgrade(req)) return upgrade_websocket(target);
    auto connection = req[http::field::connection];
    auto upgrade = req[http::field::upgrade];
    bool forward = request_.kind == SessionKind::port_forward;
    const auto& supported = forward ? kForwardVersions : kCommandVersions;
    auto offers = header_values(req, "X-Stream-Protocol-Version");
    if (offers.empty())
      return reply(http::status::bad_request, "unable to upgrade: X-Stream-Protocol-Version is required\n");
    std::string chosen;
    for (const auto& offer : offers)
      if (chosen.empty() && std::find(supported.begin(), supported.end(), offer) != supported.end()) chosen = offer;
    if (chosen.empty())
      return reply(http::status::forbidden, "unable to upgrade: unable to negotiate protocol\n", supported);
    if (!boost::algorithm::icontains(std::string_view(connection.data(), connection.size()), "upgrade") ||
        !boost::algorithm::icontains(std::string_view(upgrade.data(), upgrade.size()), "spdy/3.1"))
      return reply(http::status::bad_request, "unable to upgrade: missing upgrade headers in request\n");
    upgrade_spdy(chosen);
  }

  void upgrade_spdy(const std::string& version) {
    auto res = std::make_shared<http::response<http::empty_body>>(http::status::switching_protocols, 11);
    res->set(http::field::connection, "Upgrade");
    res->set(http::field::upgrade, "SPDY/3.1");
    res->set("X-Stream-Protocol-Version", version);
    http::async_write(stream_, *res, [self = shared_from_this(), res, version](beast::error_code ec, size_t) {
      if (ec) return;
      self->stream_.expires_never();
      std::string rest = beast::buffers_to_string(self->buffer_.data());
      auto conn =
          std::make_shared<SpdyConnection>(self->stream_.release_socket(), std::move(rest), self->ctx_.idle_timeout());
      uint64_t id = self->ctx_.registry.add(conn, conn->executor());
      if (self->request_.kind == SessionKind::port_forward)
        serve_forward_spdy(self->ctx_, conn, std::move(self->request_), id);
      else
        serve_command_spdy(self->ctx_, conn, std::move(self->request_), command_version(version), id);
    });
  }

  void upgrade_websocket(std::string_view target) {
    auto offers = header_values(parser_.get(), "Sec-WebSocket-Protocol");
    bool forward = request_.kind == SessionKind::port_forward;
    auto proto = forward ? ws::negotiate_portforward(offers) : ws::negotiate_remotecommand(offers);
    if (!proto) return reply(http::status::forbidden, "requested websocket subprotocols are not supported\n");
    std::vector<int32_t> ports;
    if (forward) {
      ports = request_.ports;
      if (ports.empty()) {
        auto q = query_ports(target);
        if (!q.ok()) return reply(http::status::bad_request, q.status().message() + "\n");
        ports = std::move(*q);
      }
      if (ports.empty()) return reply(http::status::bad_request, "query parameter \"port\" is required\n");
      if (ports.size() > (proto->codec == ws::Codec::base64 ? 5u : 127u))
        return reply(http::status::bad_request, "too many ports\n");
    }
    auto conn = std::make_shared<WsConnection>(std::move(stream_), *proto, ctx_.idle_timeout());
    conn->accept(parser_.get(), [self = shared_from_this(), conn, ports = std::move(ports)](bool ok) mutable {
      if (!ok) return;
      uint64_t id = self->ctx_.registry.add(conn, conn->executor());
      if (self->request_.kind == SessionKind::port_forward)
        serve_forward_ws(self->ctx_, conn, std::move(self->request_), std::move(ports), id);
      else
        serve_command_ws(self->ctx_, conn, std::move(self->request_), id);
    });
  }

  // An answer to a request that was not read whole: the connection closes after it.
  void refuse(http::status status, std::string body) {
    spdlog::info("streaming: refusing a request: {}", body.substr(0, body.size() - 1));
    reply(status, std::move(body), {}, 11);
  }

  void reply(http::status status, std::string body, const std::vector<std::string>& accepted = {},
             unsigned version = 0) {
    auto res = std::make_shared<http::response<http::string_body>>(status, version ? version : parser_.get().version());
    res->set(http::field::content_type, "text/plain; charset=utf-8");
    for (const auto& v : accepted) res->insert("X-Accepted-Stream-Protocol-Versions", v);
    res->keep_alive(false);
    res->body() = std::move(body);
    res->prepare_payload();
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  ServerContext& ctx_;
  TokenStore& tokens_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  PendingRequest request_;
};

}  // namespace

void serve_http(ServerContext& ctx, TokenStore& tokens, tcp::socket socket) {
  if (ctx.pending_requests >= limits::kMaxPendingRequests) {
    if (!ctx.refusing_requests.exchange(true))  // once per episode: the log must not be the next flood
      spdlog::warn("streaming: {} connections already wait for their request, closing new ones",
                   limits::kMaxPendingRequests);
    return;  // the socket closes here
  }
  ctx.refusing_requests = false;
  std::make_shared<HttpExchange>(ctx, tokens, std::move(socket))->run();
}

}  // namespace berth::streaming
