// SPDY/3.1 frame header parsing and the encoders of every frame berth sends or tests with.
#include "spdy_frame.h"

namespace berth::spdy {

namespace {

uint32_t get32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}
uint32_t get32(std::string_view s, size_t at) { return get32(reinterpret_cast<const uint8_t*>(s.data()) + at); }

std::string control_header(uint16_t type, uint8_t flags, uint32_t length) {
  std::string out;
  out.reserve(kFrameHeaderSize + length);
  out.push_back(char(0x80 | (kVersion >> 8)));
  out.push_back(char(kVersion & 0xff));
  out.push_back(char(type >> 8));
  out.push_back(char(type & 0xff));
  put32(out, (uint32_t(flags) << 24) | (length & kMaxFrameLength));
  return out;
}

}  // namespace

void put32(std::string& out, uint32_t v) {
  out.push_back(char(v >> 24));
  out.push_back(char(v >> 16));
  out.push_back(char(v >> 8));
  out.push_back(char(v));
}

FrameHeader parse_frame_header(const uint8_t* p) {
  FrameHeader h;
  h.control = (p[0] & 0x80) != 0;
  if (h.control) {
    h.version = uint16_t(((p[0] & 0x7f) << 8) | p[1]);
    h.type = uint16_t((p[2] << 8) | p[3]);
  } else {
    h.stream_id = get32(p) & kMaxStreamId;
  }
  h.flags = p[4];
  h.length = get32(p + 4) & kMaxFrameLength;
  return h;
}

std::optional<SynStream> parse_syn_stream(std::string_view payload) {
  if (payload.size() < 10) return std::nullopt;
  SynStream s;
  s.stream_id = get32(payload, 0) & kMaxStreamId;
  s.associated_id = get32(payload, 4) & kMaxStreamId;
  s.priority = uint8_t(uint8_t(payload[8]) >> 5);
  s.header_block = payload.substr(10);
  return s;
}

std::optional<StreamHeaders> parse_stream_headers(std::string_view payload) {
  if (payload.size() < 4) return std::nullopt;
  return StreamHeaders{get32(payload, 0) & kMaxStreamId, payload.substr(4)};
}

std::optional<RstStream> parse_rst_stream(std::string_view payload) {
  if (payload.size() != 8) return std::nullopt;
  return RstStream{get32(payload, 0) & kMaxStreamId, get32(payload, 4)};
}

std::optional<std::vector<Setting>> parse_settings(std::string_view payload) {
  if (payload.size() < 4) return std::nullopt;
  uint32_t count = get32(payload, 0);
  if (payload.size() != 4 + size_t(count) * 8) return std::nullopt;
  std::vector<Setting> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t word = get32(payload, 4 + i * 8);
    out.push_back(Setting{uint8_t(word >> 24), word & 0xffffff, get32(payload, 8 + i * 8)});
  }
  return out;
}

std::optional<uint32_t> parse_ping(std::string_view payload) {
  if (payload.size() != 4) return std::nullopt;
  return get32(payload, 0);
}

std::optional<GoAway> parse_goaway(std::string_view payload) {
  if (payload.size() != 8) return std::nullopt;
  return GoAway{get32(payload, 0) & kMaxStreamId, get32(payload, 4)};
}

std::optional<WindowUpdate> parse_window_update(std::string_view payload) {
  if (payload.size() != 8) return std::nullopt;
  return WindowUpdate{get32(payload, 0) & kMaxStreamId, get32(payload, 4) & 0x7fffffff};
}

std::string data_frame_header(uint32_t stream_id, uint8_t flags, uint32_t length) {
  std::string out;
  put32(out, stream_id & kMaxStreamId);
  put32(out, (uint32_t(flags) << 24) | (length & kMaxFrameLength));
  return out;
}

std::string data_frame(uint32_t stream_id, uint8_t flags, std::string_view data) {
  std::string out = data_frame_header(stream_id, flags, uint32_t(data.size()));
  out.append(data);
  return out;
}

std::string syn_stream_frame(uint32_t stream_id, uint32_t associated_id, uint8_t priority, uint8_t flags,
                             std::string_view header_block) {
  std::string out = control_header(kSynStream, flags, uint32_t(10 + header_block.size()));
  put32(out, stream_id & kMaxStreamId);
  put32(out, associated_id & kMaxStreamId);
  out.push_back(char((priority & 0x7) << 5));
  out.push_back('\0');  // credential slot
  out.append(header_block);
  return out;
}

std::string syn_reply_frame(uint32_t stream_id, uint8_t flags, std::string_view header_block) {
  std::string out = control_header(kSynReply, flags, uint32_t(4 + header_block.size()));
  put32(out, stream_id & kMaxStreamId);
  out.append(header_block);
  return out;
}

std::string headers_frame(uint32_t stream_id, uint8_t flags, std::string_view header_block) {
  std::string out = control_header(kHeaders, flags, uint32_t(4 + header_block.size()));
  put32(out, stream_id & kMaxStreamId);
  out.append(header_block);
  return out;
}

std::string rst_stream_frame(uint32_t stream_id, uint32_t status) {
  std::string out = control_header(kRstStream, 0, 8);
  put32(out, stream_id & kMaxStreamId);
  put32(out, status);
  return out;
}

std::string settings_frame(const std::vector<Setting>& settings, uint8_t flags) {
  std::string out = control_header(kSettings, flags, uint32_t(4 + settings.size() * 8));
  put32(out, uint32_t(settings.size()));
  for (const auto& s : settings) {
    put32(out, (uint32_t(s.flags) << 24) | (s.id & 0xffffff));
    put32(out, s.value);
  }
  return out;
}

std::string ping_frame(uint32_t id) {
  std::string out = control_header(kPing, 0, 4);
  put32(out, id);
  return out;
}

std::string goaway_frame(uint32_t last_good_stream_id, uint32_t status) {
  std::string out = control_header(kGoAway, 0, 8);
  put32(out, last_good_stream_id & kMaxStreamId);
  put32(out, status);
  return out;
}

std::string window_update_frame(uint32_t stream_id, uint32_t delta) {
  std::string out = control_header(kWindowUpdate, 0, 8);
  put32(out, stream_id & kMaxStreamId);
  put32(out, delta & 0x7fffffff);
  return out;
}

}  // namespace berth::spdy
