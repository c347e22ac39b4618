// QueuedStream: the layer under a WebSocket connection's Beast stream that owns its write queue.
// Every byte Beast writes — the 101 answer, data messages, the pongs it sends on its own for each
// client ping, the close frame — is copied into one queue with a byte cap and the write completes
// at once; a single loop sends the queue to the socket. Beast answers each ping before it reads
// on, so without this layer a client that pings and never reads would hold its session stalled
// forever; with it, the queue passing the cap fails the connection (the socket is closed, the
// pending write and read fail, the session ends). Data is paced above this layer: WsConnection
// writes the next message only while the queue is under limits::kWriteHighWater.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace berth::streaming {

class QueuedStream {
 public:
  using next_layer_type = boost::beast::tcp_stream;
  using executor_type = next_layer_type::executor_type;
  using error_code = boost::system::error_code;

  QueuedStream(next_layer_type next, size_t cap);
  ~QueuedStream();  // closes the socket: nothing queued outlives the connection
  QueuedStream(QueuedStream&&) = default;
  QueuedStream& operator=(QueuedStream&&) = delete;

  executor_type get_executor() noexcept { return q_->next.get_executor(); }
  next_layer_type& next_layer() noexcept { return q_->next; }

  template <class MutableBufferSequence, class ReadHandler>
  auto async_read_some(const MutableBufferSequence& buffers, ReadHandler&& handler) {
    return q_->next.async_read_some(buffers, std::forward<ReadHandler>(handler));
  }

  // Queues all of `buffers` and completes at once; no_buffer_space once the cap is passed.
  template <class ConstBufferSequence, class WriteHandler>
  auto async_write_some(const ConstBufferSequence& buffers, WriteHandler&& handler) {
    return boost::asio::async_initiate<WriteHandler, void(error_code, std::size_t)>(
        [q = q_](auto h, const ConstBufferSequence& b) {
          size_t n = boost::beast::buffer_bytes(b);
          error_code ec = q->reserve(n);
          if (ec)
            n = 0;
          else
            for (auto piece : boost::beast::buffers_range_ref(b))
              q->append(static_cast<const char*>(piece.data()), piece.size());
          Queue::flush(q);
          auto ex = q->next.get_executor();
          boost::asio::post(ex, boost::beast::bind_front_handler(std::move(h), ec, n));
        },
        handler, buffers);
  }

  size_t queued() const { return q_->queued(); }
  bool overflowed() const { return q_->overflowed; }
  // `ready()` runs once less than `mark` bytes are queued (now, if that is already so).
  void when_below(size_t mark, std::function<void()> ready);
  // `done(ec)` runs once the queue is empty, or with the error that ended the writes.
  void when_flushed(std::function<void(error_code)> done);

 private:
  struct Queue {
    Queue(next_layer_type n, size_t c) : next(std::move(n)), cap(c) {}
    size_t queued() const { return bytes; }
    error_code reserve(size_t n);
    void append(const char* p, size_t n);
    void fail(error_code ec);
    void notify();
    static void flush(const std::shared_ptr<Queue>& q);

    next_layer_type next;
    size_t cap;
    // Chunks of a fixed capacity, so the queue costs about what it holds; the first `writing`
    // of them are being written and are not touched until the write completes.
    std::deque<std::string> chunks;
    size_t front_off = 0;  // bytes of the first chunk already written
    size_t bytes = 0;      // queued and not yet written
    size_t writing = 0;
    bool overflowed = false;
    error_code failed;
    size_t below_mark = 0;
    std::function<void()> below;
    std::vector<std::function<void(error_code)>> flushed;
  };
  std::shared_ptr<Queue> q_;
};

// Beast's close handshake ends with this: what is queued goes out first, then the TCP teardown.
template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, QueuedStream& stream, TeardownHandler&& handler) {
  auto h = std::make_shared<std::decay_t<TeardownHandler>>(std::forward<TeardownHandler>(handler));
  auto ex = stream.get_executor();
  stream.when_flushed([&stream, role, h, ex](boost::system::error_code ec) {
    if (ec) {
      boost::asio::post(ex, boost::beast::bind_front_handler(std::move(*h), ec));
      return;
    }
    using boost::beast::websocket::async_teardown;
    async_teardown(role, stream.next_layer(), std::move(*h));
  });
}

}  // namespace berth::streaming
