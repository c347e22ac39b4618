// What a server SPDY connection does with each frame the client sends: SYN_STREAM (a new stream
// offered to the handler), DATA (to the stream piece by piece as it arrives, paced by consumption
// and WINDOW_UPDATEs), RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE; HEADERS and SYN_REPLY
// only keep the header decompression in step.
#include <spdlog/spdlog.h>

#include "spdy_session.h"

namespace berth::streaming {

using namespace spdy_limits;

void SpdyConnection::begin_data(const spdy::FrameHeader& h) {
  in_data_ = true;
  data_stream_ = h.stream_id;
  data_flags_ = h.flags;
  data_left_ = h.length;
  auto it = streams_.find(h.stream_id);
  if (it != streams_.end() && it->second->remote_fin_)
    queue_control(spdy::rst_stream_frame(h.stream_id, spdy::kStreamAlreadyClosed));
}

void SpdyConnection::handle_data(std::string_view chunk, bool last) {
  auto it = streams_.find(data_stream_);
  if (it == streams_.end() || it->second->remote_fin_) {
    // A stream already closed or reset: drop the bytes but give their session window back.
    inbound_buffered_ += chunk.size();
    consumed(0, chunk.size());
    return;
  }
  auto s = it->second;
  if (!chunk.empty()) {
    inbound_buffered_ += chunk.size();
    if (inbound_buffered_ > limits::kInputHighWater) paused_ = true;
    s->deliver(std::string(chunk));
  }
  if (last && (data_flags_ & spdy::kFlagFin)) {
    s->remote_end();
    if (s->fin_sent_ && !s->has_output()) drop_stream(s->id());
  }
}

bool SpdyConnection::on_syn_stream(const spdy::FrameHeader& h, std::string_view payload) {
  auto syn = spdy::parse_syn_stream(payload);
  if (!syn) return session_error("malformed SYN_STREAM"), false;
  auto headers = decompressor_.decompress(syn->header_block);
  if (!headers.ok()) return session_error(headers.status().message()), false;
  if (syn->stream_id == 0 || syn->stream_id % 2 == 0 || syn->stream_id <= last_stream_id_)
    return session_error("SYN_STREAM with stream id " + std::to_string(syn->stream_id)), false;
  uint32_t id = syn->stream_id;
  last_stream_id_ = id;
  if (goaway_received_ || !handler_ || streams_.size() >= kMaxStreams) {
    queue_control(spdy::rst_stream_frame(id, spdy::kRefusedStream));
    return true;
  }
  auto s = std::make_shared<SpdyStream>(weak_from_this(), id, std::move(*headers), peer_initial_window_);
  streams_[id] = s;
  if (h.flags & spdy::kFlagUnidirectional) s->fin_queued_ = s->fin_sent_ = true;
  if (!handler_->on_stream(s)) {
    s->reset(spdy::kCancel);
    return true;
  }
  if (closed_) return false;
  auto reply = compressor_.compress({});
  if (!reply.ok()) return session_error(reply.status().message()), false;
  queue_control(spdy::syn_reply_frame(id, 0, *reply));
  s->replied_ = true;
  if (h.flags & spdy::kFlagFin) s->remote_end();
  if (s->has_output()) mark_ready(s);
  schedule();
  return true;
}

bool SpdyConnection::handle_control(const spdy::FrameHeader& h, std::string_view payload) {
  switch (h.type) {
    case spdy::kSynStream: return on_syn_stream(h, payload);
    case spdy::kSynReply:
    case spdy::kHeaders: {
      auto sh = spdy::parse_stream_headers(payload);
      if (!sh) return session_error("malformed HEADERS"), false;
      auto headers = decompressor_.decompress(sh->header_block);  // keeps the zlib context in step
      if (!headers.ok()) return session_error(headers.status().message()), false;
      return true;
    }
    case spdy::kRstStream: {
      auto rst = spdy::parse_rst_stream(payload);
      if (!rst) return session_error("malformed RST_STREAM"), false;
      auto it = streams_.find(rst->stream_id);
      if (it == streams_.end()) return true;
      auto s = it->second;
      streams_.erase(it);
      s->reset_ = true;
      s->fail_outbound();
      s->remote_end();
      return true;
    }
    case spdy::kSettings: {
      auto settings = spdy::parse_settings(payload);
      if (!settings) return session_error("malformed SETTINGS"), false;
      for (const auto& st : *settings) {
        if (st.id != spdy::kSettingsInitialWindowSize) continue;
        if (st.value > spdy::kMaxWindow) return session_error("initial window too large"), false;
        int64_t delta = int64_t(st.value) - peer_initial_window_;
        peer_initial_window_ = st.value;
        for (auto& [id, s] : streams_) s->send_window_ += delta;
        flow_control_seen_ = true;
      }
      break;
    }
    case spdy::kPing: {
      auto id = spdy::parse_ping(payload);
      if (!id) return session_error("malformed PING"), false;
      if (*id % 2 == 1) queue_control(spdy::ping_frame(*id));  // the client's; ours are even
      return true;
    }
    case spdy::kGoAway: {
      if (!spdy::parse_goaway(payload)) return session_error("malformed GOAWAY"), false;
      goaway_received_ = true;
      if (handler_) handler_->on_goaway();
      return true;
    }
    case spdy::kWindowUpdate: {
      auto wu = spdy::parse_window_update(payload);
      if (!wu || wu->delta == 0) return session_error("malformed WINDOW_UPDATE"), false;
      flow_control_seen_ = true;
      if (wu->stream_id == 0) {
        session_send_window_ += wu->delta;
        if (session_send_window_ > spdy::kMaxWindow) return session_error("session window overflow"), false;
      } else if (auto it = streams_.find(wu->stream_id); it != streams_.end()) {
        auto s = it->second;
        s->send_window_ += wu->delta;
        if (s->send_window_ > spdy::kMaxWindow) {
          s->reset(spdy::kFlowControlError);
          return true;
        }
      }
      break;
    }
    default: return true;  // unknown control frames are ignored
  }
  for (auto& [id, s] : streams_)
    if (s->has_output()) mark_ready(s);
  schedule();
  return true;
}

void SpdyConnection::consumed(uint32_t stream_id, size_t n) {
  if (closed_) return;
  inbound_buffered_ -= std::min<uint64_t>(inbound_buffered_, n);
  session_unacked_ += n;
  if (auto it = streams_.find(stream_id); stream_id != 0 && it != streams_.end() && !it->second->remote_fin_) {
    auto& s = *it->second;
    s.recv_unacked_ += n;
    if (s.recv_unacked_ >= uint64_t(kOurStreamWindow / 2)) {
      queue_control(spdy::window_update_frame(stream_id, uint32_t(s.recv_unacked_)));
      s.recv_unacked_ = 0;
    }
  }
  if (session_unacked_ >= uint64_t(kOurSessionWindow / 2)) {
    queue_control(spdy::window_update_frame(0, uint32_t(session_unacked_)));
    session_unacked_ = 0;
  }
  if (paused_ && inbound_buffered_ <= limits::kInputLowWater) {
    paused_ = false;
    read_more();
  }
}

}  // namespace berth::streaming
