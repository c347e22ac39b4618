// The test client's WebSocket connection: connect and handshake, then an async read loop and a
// write queue on a private io thread.
#include "ws_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "http_upgrade.h"

#include <cstring>

namespace berth::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

namespace {

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string b64(std::string_view in) {
  std::string out;
  size_t i = 0;
  while (i + 2 < in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8 | uint8_t(in[i + 2]);
    for (int k = 3; k >= 0; --k) out += kB64[(v >> (6 * k)) & 63];
    i += 3;
  }
  if (i < in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16 | (i + 1 < in.size() ? uint32_t(uint8_t(in[i + 1])) << 8 : 0);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < in.size() ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string unb64(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::strchr(kB64, c);
    if (c == '=' || !p || c == '\0') break;
    acc = (acc << 6) | uint32_t(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace

WsClient::WsClient() : work_(asio::make_work_guard(ioc_)), ws_(ioc_) {}

Result<std::unique_ptr<WsClient>> WsClient::dial(const std::string& url, const std::vector<std::string>& protocols,
                                                 bool port_forward, std::chrono::milliseconds timeout) {
  auto u = parse_url(url);
  if (!u.ok()) return u.status();
  std::unique_ptr<WsClient> c(new WsClient());
  c->port_forward_ = port_forward;
  beast::error_code ec;
  asio::ip::tcp::resolver resolver(c->ioc_);
  auto results = resolver.resolve(u->host, u->port, ec);
  if (ec) return internal_error("resolve: " + ec.message());
  beast::get_lowest_layer(c->ws_).expires_after(timeout);
  beast::get_lowest_layer(c->ws_).connect(results, ec);
  if (ec) return internal_error("connect: " + ec.message());
  beast::get_lowest_layer(c->ws_).socket().set_option(asio::ip::tcp::no_delay(true), ec);
  std::string offer;
  for (const auto& p : protocols) offer += (offer.empty() ? "" : ", ") + p;
  c->ws_.set_option(websocket::stream_base::decorator([offer](websocket::request_type& req) {
    if (!offer.empty()) req.set(beast::http::field::sec_websocket_protocol, offer);
    req.set(beast::http::field::user_agent, "berth-streaming-test");
  }));
  // The async handshake hands back the response even when the upgrade is declined (the
  // synchronous one of Boost 1.74 does not), so a refusal's status code is known.
  websocket::response_type res;
  bool done = false;
  c->ws_.async_handshake(res, u->host + ":" + u->port, u->target, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  while (!done) c->ioc_.run_one();
  if (ec) {
    if (res.result_int() != 101 && ec == websocket::error::upgrade_declined)
      return http_refusal(int(res.result_int()), res.body());
    return internal_error("websocket handshake: " + ec.message());
  }
  beast::get_lowest_layer(c->ws_).expires_never();
  c->ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
  c->ws_.read_message_max(64 << 20);
  c->protocol_ = std::string(res[beast::http::field::sec_websocket_protocol]);
  c->read_loop();
  c->thread_ = std::thread([p = c.get()] { p->ioc_.run(); });
  return c;
}

WsClient::~WsClient() {
  abort();
  work_.reset();
  if (thread_.joinable()) thread_.join();
}

void WsClient::read_loop() {
  ws_.async_read(rbuf_, [this](beast::error_code ec, size_t) {
    if (ec) {
      std::lock_guard lock(mu_);
      closed_ = true;
      cv_.notify_all();
      return;
    }
    std::string msg = beast::buffers_to_string(rbuf_.data());
    rbuf_.consume(rbuf_.size());
    if (!msg.empty()) {
      std::lock_guard lock(mu_);
      uint8_t ch = uint8_t(msg[0]);
      std::string payload = msg.substr(1);
      if (!ws_.got_binary()) {
        ch = uint8_t(ch - '0');
        payload = unb64(payload);
      }
      if (port_forward_ && !ports_.count(ch)) {
        ports_[ch] = payload.size() >= 2 ? uint8_t(payload[0]) | (uint8_t(payload[1]) << 8) : -1;
        payload.erase(0, std::min<size_t>(2, payload.size()));
      }
      in_[ch] += payload;
      cv_.notify_all();
    }
    read_loop();
  });
}

void WsClient::write_next() {
  if (writing_ || wqueue_.empty()) return;
  writing_ = true;
  ws_.binary(wqueue_.front().binary);
  ws_.async_write(asio::buffer(wqueue_.front().payload), [this](beast::error_code ec, size_t) {
    writing_ = false;
    auto done = wqueue_.front().done;
    wqueue_.pop_front();
    done->set_value(ec ? internal_error("websocket write: " + ec.message()) : ok_status());
    write_next();
  });
}

Status WsClient::send_message(std::string payload, bool binary) {
  auto done = std::make_shared<std::promise<Status>>();
  auto result = done->get_future();
  asio::post(ioc_, [this, payload = std::move(payload), binary, done]() mutable {
    wqueue_.push_back(Out{std::move(payload), binary, done});
    write_next();
  });
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
    return deadline_exceeded("websocket write timed out");
  return result.get();
}

Status WsClient::send(uint8_t channel, std::string_view data) {
  if (base64()) return send_message(std::string(1, char('0' + channel)) + b64(data), false);
  return send_message(std::string(1, char(channel)) + std::string(data), true);
}

Status WsClient::send_chunked(uint8_t channel, std::string_view data, size_t chunk) {
  std::vector<std::future<Status>> results;
  std::vector<Out> batch;
  while (!data.empty()) {
    size_t n = std::min(chunk, data.size());
    std::string_view part = data.substr(0, n);
    Out o;
    o.binary = !base64();
    o.payload =
        o.binary ? std::string(1, char(channel)) + std::string(part) : std::string(1, char('0' + channel)) + b64(part);
    o.done = std::make_shared<std::promise<Status>>();
    results.push_back(o.done->get_future());
    batch.push_back(std::move(o));
    data.remove_prefix(n);
  }
  asio::post(ioc_, [this, batch = std::move(batch)]() mutable {
    for (auto& o : batch) wqueue_.push_back(std::move(o));
    write_next();
  });
  for (auto& r : results) {
    if (r.wait_for(std::chrono::seconds(120)) != std::future_status::ready)
      return deadline_exceeded("websocket write timed out");
    auto s = r.get();
    if (!s.ok()) return s;
  }
  return ok_status();
}

Result<std::string> WsClient::read(uint8_t channel, size_t max, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  auto& buf = in_[channel];
  if (!cv_.wait_for(lock, timeout, [&] { return !buf.empty() || closed_; }))
    return deadline_exceeded("websocket: no data on channel " + std::to_string(channel));
  std::string out = buf.substr(0, max);
  buf.erase(0, out.size());
  return out;
}

Result<std::pair<uint8_t, std::string>> WsClient::read_any(const std::vector<uint8_t>& channels,
                                                           std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  uint8_t found = 0;
  bool any = false;
  if (!cv_.wait_for(lock, timeout, [&] {
        for (uint8_t ch : channels)
          if (!in_[ch].empty()) {
            found = ch;
            return any = true;
          }
        return closed_;
      }))
    return deadline_exceeded("websocket: nothing on any channel");
  if (!any) return std::make_pair(uint8_t(0), std::string());
  std::string out = std::move(in_[found]);
  in_[found].clear();
  return std::make_pair(found, std::move(out));
}

int WsClient::port_of(uint8_t channel, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return ports_.count(channel) > 0 || closed_; });
  return ports_.count(channel) ? ports_[channel] : -1;
}

bool WsClient::wait_closed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return closed_; });
}

bool WsClient::closed() {
  std::lock_guard lock(mu_);
  return closed_;
}

void WsClient::abort() {
  asio::post(ioc_, [this] {
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(ws_).socket().close(ignored);
  });
}

}  // namespace berth::test
