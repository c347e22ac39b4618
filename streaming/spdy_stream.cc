// One SPDY stream of a server connection, as a Channel: inbound bytes with consumption callbacks
// (which feed the WINDOW_UPDATEs), outbound chunks queued for the connection's scheduler.
#include <boost/asio/post.hpp>

#include "spdy_session.h"

namespace berth::streaming {

SpdyStream::SpdyStream(std::weak_ptr<SpdyConnection> conn, uint32_t id, spdy::HeaderList headers, int64_t send_window)
    : conn_(std::move(conn)), id_(id), headers_(std::move(headers)), send_window_(send_window) {}

void SpdyStream::on_receive(DataHandler data, std::function<void()> end) {
  on_data_ = std::move(data);
  on_end_ = std::move(end);
  auto early = std::move(early_);
  early_.clear();
  for (auto& chunk : early) deliver(std::move(chunk));
  if (remote_fin_) remote_end();
}

void SpdyStream::deliver(std::string data) {
  if (!on_data_) {
    early_.push_back(std::move(data));
    return;
  }
  size_t n = data.size();
  auto once = std::make_shared<bool>(false);
  on_data_(data, [conn = conn_, id = id_, n, once] {
    if (*once) return;
    *once = true;
    if (auto c = conn.lock()) c->consumed(id, n);
  });
}

void SpdyStream::remote_end() {
  remote_fin_ = true;
  if (end_signalled_ || !on_end_ || !early_.empty()) return;
  end_signalled_ = true;
  auto cb = on_end_;
  cb();
}

void SpdyStream::send(std::string data, std::function<void(bool)> done) {
  auto c = conn_.lock();
  if (!c || c->closed_ || c->lingering_ || reset_ || fin_queued_) {
    if (done) {
      if (c)
        boost::asio::post(c->executor(), [done = std::move(done)] { done(false); });
      else
        done(false);
    }
    return;
  }
  out_.push_back(Out{std::make_shared<const std::string>(std::move(data)), 0, std::move(done)});
  c->mark_ready(shared_from_this());
  c->schedule();
}

void SpdyStream::finish() {
  auto c = conn_.lock();
  if (!c || fin_queued_ || reset_) return;
  fin_queued_ = true;
  c->mark_ready(shared_from_this());
  c->schedule();
}

void SpdyStream::reset(uint32_t status) {
  if (reset_) return;
  reset_ = true;
  auto c = conn_.lock();
  if (c && !c->closed_) c->queue_control(spdy::rst_stream_frame(id_, status));
  fail_outbound();
  remote_end();
  if (c) c->drop_stream(id_);
}

void SpdyStream::fail_outbound() {
  auto out = std::move(out_);
  out_.clear();
  fin_sent_ = true;
  auto c = conn_.lock();
  for (auto& o : out) {
    if (!o.done) continue;
    if (c)
      boost::asio::post(c->executor(), [done = std::move(o.done)] { done(false); });
    else
      o.done(false);
  }
}

}  // namespace berth::streaming
