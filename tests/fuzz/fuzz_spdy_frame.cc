// Fuzz target: SPDY/3.1 frame decoding (streaming/spdy_frame.h). The input is a client's byte
// stream cut into frames the way SpdyConnection::process does; every control payload goes through
// its parser, and what parses must survive a round trip through berth's own encoder.
#include <cstring>

#include "fuzz_support.h"
#include "spdy_frame.h"

namespace spdy = berth::spdy;

namespace {

std::string_view payload_of(const std::string& frame) { return std::string_view(frame).substr(spdy::kFrameHeaderSize); }

spdy::FrameHeader header_of(const std::string& frame) {
  return spdy::parse_frame_header(reinterpret_cast<const uint8_t*>(frame.data()));
}

void check_control(const spdy::FrameHeader& h, std::string_view payload) {
  switch (h.type) {
    case spdy::kSynStream:
      if (auto s = spdy::parse_syn_stream(payload)) {
        FUZZ_CHECK(payload.size() >= 10 && s->header_block.size() == payload.size() - 10);
        FUZZ_CHECK(s->stream_id <= spdy::kMaxStreamId && s->associated_id <= spdy::kMaxStreamId && s->priority < 8);
        auto again = spdy::syn_stream_frame(s->stream_id, s->associated_id, s->priority, h.flags, s->header_block);
        auto t = spdy::parse_syn_stream(payload_of(again));
        FUZZ_CHECK(t && t->stream_id == s->stream_id && t->associated_id == s->associated_id &&
                   t->priority == s->priority && t->header_block == s->header_block);
        auto ah = header_of(again);
        FUZZ_CHECK(ah.control && ah.type == spdy::kSynStream && ah.flags == h.flags && ah.length == h.length);
      } else {
        FUZZ_CHECK(payload.size() < 10);
      }
      break;
    case spdy::kSynReply:
    case spdy::kHeaders:
      if (auto s = spdy::parse_stream_headers(payload)) {
        auto again = h.type == spdy::kHeaders ? spdy::headers_frame(s->stream_id, h.flags, s->header_block)
                                              : spdy::syn_reply_frame(s->stream_id, h.flags, s->header_block);
        auto t = spdy::parse_stream_headers(payload_of(again));
        FUZZ_CHECK(t && t->stream_id == s->stream_id && t->header_block == s->header_block);
        FUZZ_CHECK(header_of(again).length == h.length);
      } else {
        FUZZ_CHECK(payload.size() < 4);
      }
      break;
    case spdy::kRstStream:
      if (auto r = spdy::parse_rst_stream(payload)) {
        auto t = spdy::parse_rst_stream(payload_of(spdy::rst_stream_frame(r->stream_id, r->status)));
        FUZZ_CHECK(t && t->stream_id == r->stream_id && t->status == r->status);
      }
      break;
    case spdy::kSettings:
      if (auto s = spdy::parse_settings(payload)) {
        FUZZ_CHECK(payload.size() == 4 + s->size() * 8);
        auto again = spdy::settings_frame(*s, h.flags);
        FUZZ_CHECK(payload_of(again) == payload);
      }
      break;
    case spdy::kPing:
      if (auto id = spdy::parse_ping(payload)) FUZZ_CHECK(payload_of(spdy::ping_frame(*id)) == payload);
      break;
    case spdy::kGoAway:
      if (auto g = spdy::parse_goaway(payload)) {
        auto t = spdy::parse_goaway(payload_of(spdy::goaway_frame(g->last_good_stream_id, g->status)));
        FUZZ_CHECK(t && t->last_good_stream_id == g->last_good_stream_id && t->status == g->status);
      }
      break;
    case spdy::kWindowUpdate:
      if (auto w = spdy::parse_window_update(payload)) {
        FUZZ_CHECK(w->delta <= 0x7fffffff);
        auto t = spdy::parse_window_update(payload_of(spdy::window_update_frame(w->stream_id, w->delta)));
        FUZZ_CHECK(t && t->stream_id == w->stream_id && t->delta == w->delta);
      }
      break;
    default:
      // Unknown types are ignored by the session, but every parser must cope with any payload.
      (void)spdy::parse_syn_stream(payload);
      (void)spdy::parse_stream_headers(payload);
      (void)spdy::parse_rst_stream(payload);
      (void)spdy::parse_settings(payload);
      (void)spdy::parse_ping(payload);
      (void)spdy::parse_goaway(payload);
      (void)spdy::parse_window_update(payload);
  }
}

}  // namespace

BERTH_FUZZ_TARGET(spdy_frame) {
  // Copied so that ASan sees the exact end of the stream, as the session's buffer would.
  std::string stream(reinterpret_cast<const char*>(data), size);
  size_t at = 0;
  while (stream.size() - at >= spdy::kFrameHeaderSize) {
    auto h = spdy::parse_frame_header(reinterpret_cast<const uint8_t*>(stream.data() + at));
    FUZZ_CHECK(h.length <= spdy::kMaxFrameLength);
    if (stream.size() - at - spdy::kFrameHeaderSize < h.length) break;
    std::string_view payload(stream.data() + at + spdy::kFrameHeaderSize, h.length);
    if (h.control) {
      check_control(h, payload);
    } else {
      FUZZ_CHECK(h.stream_id <= spdy::kMaxStreamId);
      auto again = spdy::data_frame(h.stream_id, h.flags, payload);
      auto ah = header_of(again);
      FUZZ_CHECK(!ah.control && ah.stream_id == h.stream_id && ah.flags == h.flags && ah.length == h.length);
      FUZZ_CHECK(payload_of(again) == payload);
    }
    at += spdy::kFrameHeaderSize + h.length;
  }
  return 0;
}
