// A server-side SPDY/3.1 connection after the HTTP upgrade: stream life cycle, header
// compression contexts, flow control (stream and session windows), PING, GOAWAY and RST_STREAM.
// Everything runs on the connection's strand.
//
// Flow control: berth honours the client's windows as soon as the client shows it takes part in
// flow control (a SETTINGS initial window or any WINDOW_UPDATE). Go's spdystream — what kubectl,
// crictl and kubelet use — never sends either and relies on TCP backpressure; such a peer is not
// held to the 64 KiB default window (it would stall forever). Inbound, berth announces its windows,
// sends WINDOW_UPDATEs as the session consumes data, and stops reading the socket while too much
// unconsumed data is buffered, whether or not the client respects the windows.
//
// Bounds (session_limits.h): DATA frames are handed to their streams as their bytes arrive,
// control frames are capped in length, and the write queue has a byte cap: a client that keeps
// sending frames that need replies (PING, or DATA on a closed stream) without reading them is cut
// off.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "channel.h"
#include "session_limits.h"
#include "spdy_frame.h"
#include "spdy_headers.h"

namespace berth::streaming {

class SpdyConnection;

namespace spdy_limits {
constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kMaxDataFrame = 64 * 1024;  // what berth sends
constexpr size_t kWriteBatchBytes = 1 << 20;
constexpr size_t kControlRun = 64 * 1024;       // small control frames share buffers of this size
constexpr int64_t kOurStreamWindow = 1 << 20;   // announced in SETTINGS
constexpr int64_t kOurSessionWindow = 8 << 20;  // announced with a WINDOW_UPDATE for stream 0
constexpr size_t kMaxStreams = 1024;            // open at once per connection
constexpr auto kLinger = std::chrono::seconds(5);
}  // namespace spdy_limits

class SpdyStream : public Channel, public std::enable_shared_from_this<SpdyStream> {
 public:
  SpdyStream(std::weak_ptr<SpdyConnection> conn, uint32_t id, spdy::HeaderList headers, int64_t send_window);
  uint32_t id() const { return id_; }
  const spdy::HeaderList& headers() const { return headers_; }
  std::string header(std::string_view name) const { return spdy::find_header(headers_, name); }

  void on_receive(DataHandler data, std::function<void()> end) override;
  void send(std::string data, std::function<void(bool ok)> done) override;
  void finish() override;
  void reset(uint32_t status = spdy::kCancel);

 private:
  friend class SpdyConnection;
  struct Out {
    std::shared_ptr<const std::string> data;
    size_t off = 0;
    std::function<void(bool)> done;
  };
  void deliver(std::string data);
  void remote_end();
  void fail_outbound();
  bool has_output() const { return !out_.empty() || (fin_queued_ && !fin_sent_); }

  std::weak_ptr<SpdyConnection> conn_;
  uint32_t id_;
  spdy::HeaderList headers_;
  DataHandler on_data_;
  std::function<void()> on_end_;
  std::deque<std::string> early_;  // bytes that arrived before a receiver was registered
  bool remote_fin_ = false, end_signalled_ = false;
  std::deque<Out> out_;
  bool replied_ = false, fin_queued_ = false, fin_sent_ = false, reset_ = false, ready_ = false;
  int64_t send_window_;
  uint64_t recv_unacked_ = 0;  // consumed bytes not yet returned with a WINDOW_UPDATE
};

class SpdyHandler {
 public:
  virtual ~SpdyHandler() = default;
  // A new client stream; false refuses it (RST_STREAM CANCEL instead of the SYN_REPLY).
  virtual bool on_stream(const std::shared_ptr<SpdyStream>& stream) = 0;
  virtual void on_goaway() {}
  // The connection is over. lost: the client vanished, timed out or broke the protocol; false:
  // the server closed it after the session ended.
  virtual void on_closed(bool lost) = 0;
};

class SpdyConnection : public Connection, public std::enable_shared_from_this<SpdyConnection> {
 public:
  SpdyConnection(boost::asio::ip::tcp::socket socket, std::string initial_bytes,
                 std::chrono::milliseconds idle_timeout);
  void start(std::shared_ptr<SpdyHandler> handler);
  void close() override;  // GOAWAY after what is queued, then the TCP connection closes
  void abort() override;  // now, as a lost connection (server stopping)
  boost::asio::any_io_executor executor() { return socket_.get_executor(); }

 private:
  friend class SpdyStream;
  struct OutFrame {
    std::string head;
    std::shared_ptr<const std::string> body;
    size_t off = 0, len = 0;
    std::vector<std::function<void(bool)>> done;
  };

  void read_more();
  void process();
  bool handle_control(const spdy::FrameHeader& h, std::string_view payload);
  void begin_data(const spdy::FrameHeader& h);
  void handle_data(std::string_view chunk, bool last);
  bool on_syn_stream(const spdy::FrameHeader& h, std::string_view payload);
  void session_error(const std::string& why);
  // `last`: the GOAWAY that ends the connection, which may pass the write-queue cap.
  void queue_control(std::string frame, bool last = false);
  void cut_off();
  void mark_ready(const std::shared_ptr<SpdyStream>& stream);
  void schedule(bool flush = false);
  bool emit(SpdyStream& s);
  void write_more();
  void consumed(uint32_t stream_id, size_t n);
  void drop_stream(uint32_t id);
  void begin_linger();
  void close_after(std::chrono::milliseconds limit);  // a deadline for a connection that is closing
  void teardown(bool lost);
  void arm_idle();
  bool strict_flow() const { return flow_control_seen_; }

  boost::asio::ip::tcp::socket socket_;
  std::string rbuf_;  // received bytes not yet parsed
  size_t rpos_ = 0;
  std::vector<char> rtmp_;  // the buffer of the one read in flight
  // The DATA frame being received: its stream, flags, and payload bytes still to come.
  uint32_t data_stream_ = 0;
  uint8_t data_flags_ = 0;
  uint32_t data_left_ = 0;
  bool in_data_ = false;
  std::chrono::milliseconds idle_timeout_;
  boost::asio::steady_timer idle_timer_, linger_timer_;
  std::chrono::steady_clock::time_point last_activity_;
  std::shared_ptr<SpdyHandler> handler_;
  spdy::HeaderCompressor compressor_;
  spdy::HeaderDecompressor decompressor_;
  std::map<uint32_t, std::shared_ptr<SpdyStream>> streams_;
  uint32_t last_stream_id_ = 0;
  std::deque<uint32_t> ready_;
  std::deque<OutFrame> wqueue_;
  size_t wqueue_bytes_ = 0;
  size_t writing_frames_ = 0;
  bool reading_ = false, paused_ = false, closing_ = false, lingering_ = false, closed_ = false;
  bool goaway_received_ = false, flow_control_seen_ = false, protocol_error_ = false;
  int64_t peer_initial_window_ = spdy::kDefaultWindow;
  int64_t session_send_window_ = spdy::kDefaultWindow;
  uint64_t inbound_buffered_ = 0;  // delivered to streams, not yet consumed
  uint64_t session_unacked_ = 0;
};

}  // namespace berth::streaming
