// The server side of a SPDY/3.1 connection: reading and framing, the send scheduler (round robin
// over ready streams, bounded by the windows and a write-queue high-water mark), GOAWAY/linger
// shutdown and the idle timeout; what each received frame does is in spdy_dispatch.cc. See
// spdy_session.h for the flow-control policy.
#include "spdy_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "heap_trim.h"

namespace berth::streaming {

namespace asio = boost::asio;
using namespace spdy_limits;

SpdyConnection::SpdyConnection(asio::ip::tcp::socket socket, std::string initial_bytes,
                               std::chrono::milliseconds idle_timeout)
    : socket_(std::move(socket)),
      rbuf_(std::move(initial_bytes)),
      idle_timeout_(idle_timeout),
      idle_timer_(socket_.get_executor()),
      linger_timer_(socket_.get_executor()),
      decompressor_(limits::kMaxSpdyHeaderBlock) {}

void SpdyConnection::start(std::shared_ptr<SpdyHandler> handler) {
  handler_ = std::move(handler);
  last_activity_ = std::chrono::steady_clock::now();
  boost::system::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  queue_control(spdy::settings_frame({spdy::Setting{0, spdy::kSettingsInitialWindowSize, uint32_t(kOurStreamWindow)}}));
  queue_control(spdy::window_update_frame(0, uint32_t(kOurSessionWindow - spdy::kDefaultWindow)));
  arm_idle();
  process();
  read_more();
}

void SpdyConnection::arm_idle() {
  if (idle_timeout_.count() <= 0 || closed_) return;
  idle_timer_.expires_at(last_activity_ + idle_timeout_);
  idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_) return;
    if (std::chrono::steady_clock::now() - self->last_activity_ >= self->idle_timeout_) {
      spdlog::info("streaming: spdy connection idle for {}s, closing", self->idle_timeout_.count() / 1000);
      self->teardown(true);
      return;
    }
    self->arm_idle();
  });
}

void SpdyConnection::read_more() {
  if (reading_ || paused_ || closed_) return;
  reading_ = true;
  if (rtmp_.empty()) rtmp_.resize(kReadChunk);
  socket_.async_read_some(asio::buffer(rtmp_),
                          [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
                            self->reading_ = false;
                            if (self->closed_) return;
                            if (ec) {
                              self->teardown(!self->closing_ || self->protocol_error_);
                              return;
                            }
                            self->last_activity_ = std::chrono::steady_clock::now();
                            if (!self->closing_) {
                              self->rbuf_.append(self->rtmp_.data(), n);
                              self->process();
                            }
                            self->read_more();
                          });
}

void SpdyConnection::process() {
  while (!closed_ && !closing_) {
    size_t avail = rbuf_.size() - rpos_;
    if (in_data_) {  // the payload of a DATA frame goes on in pieces as it arrives
      if (avail == 0 && data_left_ > 0) break;
      size_t n = std::min<size_t>(avail, data_left_);
      std::string_view chunk(rbuf_.data() + rpos_, n);
      rpos_ += n;
      data_left_ -= uint32_t(n);
      in_data_ = data_left_ > 0;
      handle_data(chunk, !in_data_);
      continue;
    }
    if (avail < spdy::kFrameHeaderSize) break;
    auto h = spdy::parse_frame_header(reinterpret_cast<const uint8_t*>(rbuf_.data() + rpos_));
    if (!h.control) {
      if (h.stream_id == 0 || h.stream_id > last_stream_id_)
        return session_error("data frame for stream " + std::to_string(h.stream_id) + " that was never opened");
      rpos_ += spdy::kFrameHeaderSize;
      begin_data(h);
      continue;
    }
    if (h.version != spdy::kVersion) return session_error("spdy version " + std::to_string(h.version));
    if (h.length > limits::kMaxSpdyControlFrame)
      return session_error("control frame of " + std::to_string(h.length) + " bytes");
    if (avail < spdy::kFrameHeaderSize + h.length) break;
    std::string_view payload(rbuf_.data() + rpos_ + spdy::kFrameHeaderSize, h.length);
    rpos_ += spdy::kFrameHeaderSize + h.length;
    if (!handle_control(h, payload)) return;
  }
  if (rpos_ > 0 && !closed_) {
    rbuf_.erase(0, rpos_);
    rpos_ = 0;
  }
}

void SpdyConnection::session_error(const std::string& why) {
  spdlog::info("streaming: spdy protocol error, closing the connection: {}", why);
  protocol_error_ = true;
  if (closing_) return;
  closing_ = true;
  queue_control(spdy::goaway_frame(last_stream_id_, spdy::kGoAwayProtocolError), true);
  close_after(kLinger);  // the GOAWAY may wait behind bytes the client does not read
}

void SpdyConnection::close_after(std::chrono::milliseconds limit) {
  if (closed_) return;
  linger_timer_.expires_after(limit);
  linger_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->teardown(self->protocol_error_);
  });
}

void SpdyConnection::queue_control(std::string frame, bool last) {
  if (closed_) return;
  if (!last && wqueue_bytes_ + frame.size() > limits::kMaxQueuedBytes) return cut_off();
  wqueue_bytes_ += frame.size();
  // Control frames queued one after another share a buffer, so a queue of replies costs about
  // what it holds. Only frames after the ones being written may grow.
  if (wqueue_.size() > writing_frames_ && !wqueue_.back().body && wqueue_.back().done.empty() &&
      wqueue_.back().head.size() + frame.size() <= kControlRun) {
    wqueue_.back().head += frame;
  } else {
    OutFrame f;
    f.head = std::move(frame);
    wqueue_.push_back(std::move(f));
  }
  write_more();
}

void SpdyConnection::cut_off() {
  // The client sends frames that need replies and reads none of them. A GOAWAY would wait behind
  // the bytes it does not read, so the connection is closed now and all it held is freed.
  spdlog::warn("streaming: spdy client does not read its replies ({} bytes queued, cap {}), closing the connection",
               wqueue_bytes_, limits::kMaxQueuedBytes);
  protocol_error_ = true;
  closing_ = true;
  teardown(true);
  trim_heap_soon(executor());
}

void SpdyConnection::mark_ready(const std::shared_ptr<SpdyStream>& s) {
  if (s->ready_ || closed_) return;
  s->ready_ = true;
  ready_.push_back(s->id());
}

void SpdyConnection::schedule(bool flush) {
  while (!closed_ && !ready_.empty() && (flush || wqueue_bytes_ < limits::kWriteHighWater)) {
    uint32_t id = ready_.front();
    ready_.pop_front();
    auto it = streams_.find(id);
    if (it == streams_.end()) continue;
    auto s = it->second;
    s->ready_ = false;
    if (!s->replied_ || s->reset_) continue;
    if (emit(*s) && s->has_output()) mark_ready(s);
  }
  write_more();
}

bool SpdyConnection::emit(SpdyStream& s) {
  if (s.out_.empty()) {
    if (s.fin_queued_ && !s.fin_sent_) {
      s.fin_sent_ = true;
      OutFrame f;
      f.head = spdy::data_frame_header(s.id_, spdy::kFlagFin, 0);
      wqueue_bytes_ += f.head.size();
      wqueue_.push_back(std::move(f));
      if (s.remote_fin_) drop_stream(s.id_);
    }
    return true;
  }
  auto& o = s.out_.front();
  size_t remaining = o.data->size() - o.off;
  size_t n = std::min(remaining, kMaxDataFrame);
  if (strict_flow()) {
    int64_t window = std::min(s.send_window_, session_send_window_);
    if (window <= 0 && remaining > 0) return false;  // wait for a WINDOW_UPDATE
    n = std::min<size_t>(n, size_t(std::max<int64_t>(window, 0)));
  }
  bool chunk_done = o.off + n == o.data->size();
  uint8_t flags = 0;
  if (chunk_done && s.out_.size() == 1 && s.fin_queued_) {
    flags = spdy::kFlagFin;
    s.fin_sent_ = true;
  }
  OutFrame f;
  f.head = spdy::data_frame_header(s.id_, flags, uint32_t(n));
  f.body = o.data;
  f.off = o.off;
  f.len = n;
  o.off += n;
  s.send_window_ -= int64_t(n);
  session_send_window_ -= int64_t(n);
  if (chunk_done) {
    f.done.push_back(std::move(o.done));
    s.out_.pop_front();
  }
  wqueue_bytes_ += f.head.size() + n;
  wqueue_.push_back(std::move(f));
  if (s.fin_sent_ && s.remote_fin_) drop_stream(s.id_);
  return true;
}

void SpdyConnection::write_more() {
  if (closed_ || writing_frames_ > 0) return;
  if (wqueue_.empty()) {
    if (closing_ && protocol_error_)
      teardown(true);  // the GOAWAY is out; a client that broke the protocol gets no linger
    else if (closing_ && !lingering_)
      begin_linger();
    return;
  }
  std::vector<asio::const_buffer> bufs;
  size_t bytes = 0;
  for (auto& f : wqueue_) {
    if (writing_frames_ == 64 || bytes >= kWriteBatchBytes) break;
    bufs.push_back(asio::buffer(f.head));
    if (f.len > 0) bufs.push_back(asio::buffer(f.body->data() + f.off, f.len));
    bytes += f.head.size() + f.len;
    ++writing_frames_;
  }
  asio::async_write(socket_, bufs, [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
    size_t count = self->writing_frames_;
    self->writing_frames_ = 0;
    if (self->closed_) return;
    if (ec) {
      self->teardown(!self->closing_ || self->protocol_error_);
      return;
    }
    self->last_activity_ = std::chrono::steady_clock::now();
    std::vector<std::function<void(bool)>> done;
    for (size_t i = 0; i < count && !self->wqueue_.empty(); ++i) {
      auto& f = self->wqueue_.front();
      self->wqueue_bytes_ -= f.head.size() + f.len;
      for (auto& d : f.done)
        if (d) done.push_back(std::move(d));
      self->wqueue_.pop_front();
    }
    for (auto& d : done) d(true);
    self->schedule();
  });
}

void SpdyConnection::drop_stream(uint32_t id) { streams_.erase(id); }

void SpdyConnection::close() {
  if (closing_ || closed_) return;
  schedule(true);  // the streams' last frames (their FINs) go before the GOAWAY
  closing_ = true;
  queue_control(spdy::goaway_frame(last_stream_id_, spdy::kGoAwayOk), true);
  if (!lingering_) close_after(limits::kCloseDrainTimeout);
}

void SpdyConnection::abort() { teardown(true); }

void SpdyConnection::begin_linger() {
  // Everything is written: stop sending and wait (briefly) for the client to close, so that
  // unread input never turns our close into a reset that could discard the last frames.
  lingering_ = true;
  for (auto& [id, s] : streams_) s->fail_outbound();
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  close_after(kLinger);
  read_more();
}

void SpdyConnection::teardown(bool lost) {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  idle_timer_.cancel(ignored);
  linger_timer_.cancel(ignored);
  socket_.close(ignored);
  auto streams = std::move(streams_);
  streams_.clear();
  ready_.clear();
  for (auto& f : wqueue_)
    for (auto& d : f.done)
      if (d) asio::post(executor(), [d = std::move(d)] { d(false); });
  wqueue_.clear();
  wqueue_bytes_ = 0;
  for (auto& [id, s] : streams) {
    s->fail_outbound();
    s->remote_end();
  }
  if (auto h = std::move(handler_)) h->on_closed(lost);
}

}  // namespace berth::streaming
