// A server-side WebSocket connection (Boost.Beast) carrying numbered channels: the handshake with
// the negotiated subprotocol, a read loop paced by the channels' consumption, a write queue (one
// message in flight, over QueuedStream's capped byte queue), the v5 close signal, the idle timeout
// and the closing handshake. Messages are capped at limits::kMaxWsMessage.
// Everything runs on the connection's strand.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>

#include "channel.h"
#include "ws_channel.h"
#include "ws_queued_stream.h"

namespace berth::streaming {

class WsConnection;

class WsChannel : public Channel {
 public:
  WsChannel(std::weak_ptr<WsConnection> conn, uint8_t number, bool readable)
      : conn_(std::move(conn)), number_(number), readable_(readable) {}
  uint8_t number() const { return number_; }
  void on_receive(DataHandler data, std::function<void()> end) override;
  void send(std::string data, std::function<void(bool ok)> done) override;
  void finish() override {}

 private:
  friend class WsConnection;
  void deliver(std::string data, std::function<void()> consumed);
  void remote_end();

  std::weak_ptr<WsConnection> conn_;
  uint8_t number_;
  bool readable_;
  DataHandler on_data_;
  std::function<void()> on_end_;
  std::deque<std::pair<std::string, std::function<void()>>> early_;
  bool ended_ = false, end_signalled_ = false;
};

class WsConnection : public Connection, public std::enable_shared_from_this<WsConnection> {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  WsConnection(boost::beast::tcp_stream stream, ws::Subprotocol protocol, std::chrono::milliseconds idle_timeout);

  // Completes the upgrade of `request`; `ready(true)` once the client has its 101.
  void accept(const Request& request, std::function<void(bool ok)> ready);
  // Created on first use. Bytes the client sends on a channel that is not readable are dropped;
  // on a readable one they wait for the receiver.
  std::shared_ptr<WsChannel> channel(uint8_t number, bool readable);
  // Starts reading; on_closed(lost) runs once: lost when the client went away, timed out or
  // broke the protocol, false after close().
  void start(std::function<void(bool lost)> on_closed);
  void close() override;
  void abort() override;
  const ws::Subprotocol& protocol() const { return protocol_; }
  boost::asio::any_io_executor executor() { return ws_.get_executor(); }

 private:
  friend class WsChannel;
  struct OutMsg {
    std::string payload;
    std::function<void(bool)> done;
  };
  void read_more();
  void dispatch(ws::Decoded message);
  void enqueue(uint8_t channel, std::string_view data, std::function<void(bool)> done);
  void write_more();
  void arm_idle();
  void teardown(bool lost);

  boost::beast::websocket::stream<QueuedStream> ws_;
  ws::Subprotocol protocol_;
  std::chrono::milliseconds idle_timeout_;
  boost::asio::steady_timer idle_timer_, close_timer_;
  std::chrono::steady_clock::time_point last_activity_;
  boost::beast::flat_buffer rbuf_;
  std::map<uint8_t, std::shared_ptr<WsChannel>> channels_;
  std::deque<OutMsg> wqueue_;
  std::function<void(bool)> on_closed_;
  size_t unconsumed_ = 0;  // bytes handed to channels and not yet consumed
  bool reading_ = false, writing_ = false, closing_ = false, close_sent_ = false, closed_ = false, started_ = false;
};

}  // namespace berth::streaming
