// WsClient: a WebSocket client for the tests (Boost.Beast), speaking the Kubernetes channel
// framing — binary or base64 — with its own io thread; calls from the test thread block.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "berth/status.h"

namespace berth::test {

class WsClient {
 public:
  // port_forward: the first message of every channel (its port, 2 bytes) is taken off and kept.
  static Result<std::unique_ptr<WsClient>> dial(const std::string& url, const std::vector<std::string>& protocols,
                                                bool port_forward, std::chrono::milliseconds timeout);
  ~WsClient();

  const std::string& protocol() const { return protocol_; }
  bool base64() const { return protocol_.find("base64") != std::string::npos; }
  Status send(uint8_t channel, std::string_view data);
  // `data` as messages of at most `chunk` bytes, queued together; returns once all are written.
  Status send_chunked(uint8_t channel, std::string_view data, size_t chunk);
  Status send_message(std::string payload, bool binary);
  // Up to `max` bytes of `channel`; "" once the connection closed with nothing left.
  Result<std::string> read(uint8_t channel, size_t max, std::chrono::milliseconds timeout);
  // Waits until one of `channels` has bytes, or the connection closed: the channel and bytes
  // ("" when closed and drained).
  Result<std::pair<uint8_t, std::string>> read_any(const std::vector<uint8_t>& channels,
                                                   std::chrono::milliseconds timeout);
  int port_of(uint8_t channel, std::chrono::milliseconds timeout);  // -1 when none arrived
  bool wait_closed(std::chrono::milliseconds timeout);
  bool closed();
  void abort();

 private:
  WsClient();
  void read_loop();
  void write_next();

  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  boost::beast::flat_buffer rbuf_;
  std::thread thread_;
  std::string protocol_;
  bool port_forward_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint8_t, std::string> in_;
  std::map<uint8_t, int> ports_;
  bool closed_ = false;
  struct Out {
    std::string payload;
    bool binary;
    std::shared_ptr<std::promise<Status>> done;
  };
  std::deque<Out> wqueue_;  // io thread only
  bool writing_ = false;
};

}  // namespace berth::test
