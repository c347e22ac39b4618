// WebSocket connections of exec, attach and port-forward sessions: Beast does the framing,
// masking, ping/pong and close handshake; this file adds the channels, pacing, caps and timeouts.
#include "ws_session.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket.hpp>

#include "heap_trim.h"
#include "session_limits.h"

namespace berth::streaming {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

namespace {
constexpr size_t kKeptReadBuffer = 64 * 1024;
}  // namespace

void WsChannel::on_receive(DataHandler data, std::function<void()> end) {
  on_data_ = std::move(data);
  on_end_ = std::move(end);
  readable_ = true;
  auto early = std::move(early_);
  early_.clear();
  for (auto& [bytes, consumed] : early) deliver(std::move(bytes), std::move(consumed));
  if (ended_) remote_end();
}

void WsChannel::deliver(std::string data, std::function<void()> consumed) {
  if (on_data_)
    on_data_(data, std::move(consumed));
  else if (readable_)
    early_.emplace_back(std::move(data), std::move(consumed));
  else
    consumed();
}

void WsChannel::remote_end() {
  ended_ = true;
  if (end_signalled_ || !on_end_ || !early_.empty()) return;
  end_signalled_ = true;
  auto cb = on_end_;
  cb();
}

void WsChannel::send(std::string data, std::function<void(bool)> done) {
  auto c = conn_.lock();
  if (!c) {
    if (done) done(false);
    return;
  }
  c->enqueue(number_, data, std::move(done));
}

WsConnection::WsConnection(beast::tcp_stream stream, ws::Subprotocol protocol, std::chrono::milliseconds idle_timeout)
    : ws_(std::move(stream), limits::kMaxQueuedBytes),
      protocol_(std::move(protocol)),
      idle_timeout_(idle_timeout),
      idle_timer_(ws_.get_executor()),
      close_timer_(ws_.get_executor()) {}

void WsConnection::accept(const Request& request, std::function<void(bool)> ready) {
  beast::get_lowest_layer(ws_).expires_never();
  websocket::stream_base::timeout timeouts{};
  timeouts.handshake_timeout = std::chrono::seconds(10);
  timeouts.idle_timeout = websocket::stream_base::none();
  timeouts.keep_alive_pings = false;
  ws_.set_option(timeouts);
  ws_.set_option(websocket::stream_base::decorator([name = protocol_.name](websocket::response_type& res) {
    res.set(beast::http::field::server, "berth");
    if (!name.empty()) res.set(beast::http::field::sec_websocket_protocol, name);
  }));
  ws_.read_message_max(limits::kMaxWsMessage);
  ws_.auto_fragment(false);
  // A client's pings are traffic too (Beast answers them itself).
  ws_.control_callback(
      [this](websocket::frame_type, beast::string_view) { last_activity_ = std::chrono::steady_clock::now(); });
  ws_.async_accept(request, [self = shared_from_this(), ready = std::move(ready)](const beast::error_code& ec) {
    if (ec) {
      spdlog::info("streaming: websocket handshake failed: {}", ec.message());
      self->teardown(true);
    }
    ready(!ec);
  });
}

std::shared_ptr<WsChannel> WsConnection::channel(uint8_t number, bool readable) {
  auto& slot = channels_[number];
  if (!slot) slot = std::make_shared<WsChannel>(weak_from_this(), number, readable);
  return slot;
}

void WsConnection::start(std::function<void(bool)> on_closed) {
  on_closed_ = std::move(on_closed);
  started_ = true;
  last_activity_ = std::chrono::steady_clock::now();
  arm_idle();
  read_more();
  write_more();
}

void WsConnection::arm_idle() {
  if (idle_timeout_.count() <= 0 || closed_) return;
  idle_timer_.expires_at(last_activity_ + idle_timeout_);
  idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_) return;
    if (std::chrono::steady_clock::now() - self->last_activity_ >= self->idle_timeout_) {
      spdlog::info("streaming: websocket connection idle, closing");
      self->teardown(true);
      return;
    }
    self->arm_idle();
  });
}

void WsConnection::read_more() {
  // Messages keep coming while the channels hold less than kWsInputHighWater unconsumed.
  if (reading_ || closed_ || unconsumed_ >= limits::kWsInputHighWater || !started_) return;
  reading_ = true;
  ws_.async_read(rbuf_, [self = shared_from_this()](const beast::error_code& ec, size_t) {
    self->reading_ = false;
    if (self->closed_) return;
    if (ec) {
      bool cut_off = self->ws_.next_layer().overflowed();
      if (cut_off)
        spdlog::warn("streaming: websocket client does not read its replies (queue cap {} bytes), closing",
                     limits::kMaxQueuedBytes);
      else if (ec == websocket::error::message_too_big)
        spdlog::info("streaming: websocket message larger than {} bytes, closing", limits::kMaxWsMessage);
      self->teardown(!self->closing_);
      if (cut_off) trim_heap_soon(self->executor());
      return;
    }
    self->last_activity_ = std::chrono::steady_clock::now();
    auto data = self->rbuf_.data();
    auto message = ws::decode(self->protocol_, std::string_view(static_cast<const char*>(data.data()), data.size()));
    // Emptied before dispatching: a consumer may start the next read, which fills rbuf_ at once.
    self->rbuf_.consume(self->rbuf_.size());
    // One big message is no reason to keep its buffer for the life of the session.
    if (self->rbuf_.capacity() > kKeptReadBuffer) self->rbuf_.shrink_to_fit();
    self->dispatch(std::move(message));
    self->read_more();
  });
}

void WsConnection::dispatch(ws::Decoded d) {
  if (d.kind == ws::Decoded::invalid) return;
  auto it = channels_.find(d.channel);
  if (it == channels_.end()) return;  // a channel this session does not use
  if (d.kind == ws::Decoded::close) {
    it->second->remote_end();
    return;
  }
  if (d.payload.empty()) return;
  size_t n = d.payload.size();
  unconsumed_ += n;
  auto once = std::make_shared<bool>(false);
  it->second->deliver(std::move(d.payload), [weak = weak_from_this(), once, n] {
    if (*once) return;
    *once = true;
    if (auto self = weak.lock()) {
      self->unconsumed_ -= n;
      self->read_more();
    }
  });
}

void WsConnection::enqueue(uint8_t channel, std::string_view data, std::function<void(bool)> done) {
  if (closed_ || closing_) {
    if (done) asio::post(executor(), [done = std::move(done)] { done(false); });
    return;
  }
  wqueue_.push_back(OutMsg{ws::encode(protocol_.codec, channel, data), std::move(done)});
  write_more();
}

void WsConnection::write_more() {
  if (writing_ || closed_ || close_sent_ || !started_) return;
  if (ws_.next_layer().queued() >= limits::kWriteHighWater) {  // the client is slow: data waits here
    ws_.next_layer().when_below(limits::kWriteHighWater, [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->write_more();
    });
    return;
  }
  if (wqueue_.empty()) {
    if (!closing_) return;
    close_sent_ = true;
    ws_.async_close(websocket::close_code::normal,
                    [self = shared_from_this()](const beast::error_code&) { self->teardown(false); });
    return;
  }
  writing_ = true;
  ws_.text(protocol_.codec == ws::Codec::base64);
  ws_.async_write(asio::buffer(wqueue_.front().payload),
                  [self = shared_from_this()](const beast::error_code& ec, size_t) {
                    self->writing_ = false;
                    if (self->closed_) return;
                    if (ec) {
                      self->teardown(!self->closing_);
                      return;
                    }
                    self->last_activity_ = std::chrono::steady_clock::now();
                    auto done = std::move(self->wqueue_.front().done);
                    self->wqueue_.pop_front();
                    if (done) done(true);
                    self->write_more();
                  });
}

void WsConnection::close() {
  if (closing_ || closed_) return;
  closing_ = true;
  // A client that stops reading now would keep the connection and its queue for good.
  close_timer_.expires_after(limits::kCloseDrainTimeout);
  close_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->teardown(false);
  });
  write_more();
}

void WsConnection::abort() { teardown(true); }

void WsConnection::teardown(bool lost) {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  idle_timer_.cancel(ignored);
  close_timer_.cancel(ignored);
  beast::get_lowest_layer(ws_).socket().close(ignored);
  for (auto& m : wqueue_)
    if (m.done) asio::post(executor(), [done = std::move(m.done)] { done(false); });
  wqueue_.clear();
  for (auto& [n, ch] : channels_) ch->remote_end();
  if (auto cb = std::move(on_closed_)) cb(lost);
}

}  // namespace berth::streaming
