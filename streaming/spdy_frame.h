// SPDY/3.1 framing: the 8-byte frame header, control frame payloads and their encoders
// (draft-mbelshe-httpbis-spdy-00 with the 3.1 session flow control). SPDY framing is written here
// because no Debian package offers it; header blocks are in spdy_headers.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::spdy {

constexpr uint16_t kVersion = 3;
constexpr size_t kFrameHeaderSize = 8;
constexpr uint32_t kMaxFrameLength = 0xffffff;
constexpr uint32_t kMaxStreamId = 0x7fffffff;
constexpr int64_t kDefaultWindow = 65536;  // initial stream and session windows
constexpr int64_t kMaxWindow = 0x7fffffff;

enum ControlType : uint16_t {
  kSynStream = 1,
  kSynReply = 2,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoAway = 7,
  kHeaders = 8,
  kWindowUpdate = 9,
};

constexpr uint8_t kFlagFin = 0x01;
constexpr uint8_t kFlagUnidirectional = 0x02;

enum RstStatus : uint32_t {
  kProtocolError = 1,
  kInvalidStream = 2,
  kRefusedStream = 3,
  kUnsupportedVersion = 4,
  kCancel = 5,
  kInternalError = 6,
  kFlowControlError = 7,
  kStreamInUse = 8,
  kStreamAlreadyClosed = 9,
  kFrameTooLarge = 11,
};

enum GoAwayStatus : uint32_t { kGoAwayOk = 0, kGoAwayProtocolError = 1, kGoAwayInternalError = 2 };

constexpr uint32_t kSettingsInitialWindowSize = 7;

struct FrameHeader {
  bool control = false;
  uint16_t version = 0;    // control frames
  uint16_t type = 0;       // control frames
  uint32_t stream_id = 0;  // data frames
  uint8_t flags = 0;
  uint32_t length = 0;
};

// `p` points at kFrameHeaderSize bytes.
FrameHeader parse_frame_header(const uint8_t* p);

struct SynStream {
  uint32_t stream_id = 0;
  uint32_t associated_id = 0;
  uint8_t priority = 0;
  std::string_view header_block;  // compressed
};
struct StreamHeaders {  // SYN_REPLY and HEADERS
  uint32_t stream_id = 0;
  std::string_view header_block;
};
struct RstStream {
  uint32_t stream_id = 0;
  uint32_t status = 0;
};
struct Setting {
  uint8_t flags = 0;
  uint32_t id = 0;
  uint32_t value = 0;
};
struct GoAway {
  uint32_t last_good_stream_id = 0;
  uint32_t status = 0;
};
struct WindowUpdate {
  uint32_t stream_id = 0;  // 0: the session window
  uint32_t delta = 0;
};

// Payload parsers; nothing when the payload is malformed.
std::optional<SynStream> parse_syn_stream(std::string_view payload);
std::optional<StreamHeaders> parse_stream_headers(std::string_view payload);
std::optional<RstStream> parse_rst_stream(std::string_view payload);
std::optional<std::vector<Setting>> parse_settings(std::string_view payload);
std::optional<uint32_t> parse_ping(std::string_view payload);
std::optional<GoAway> parse_goaway(std::string_view payload);
std::optional<WindowUpdate> parse_window_update(std::string_view payload);

// Appends v in network byte order (SPDY's 32-bit fields; also used by the header-block encoder).
void put32(std::string& out, uint32_t v);

// Encoders; each returns a whole frame (data_frame_header only the 8 header bytes).
std::string data_frame_header(uint32_t stream_id, uint8_t flags, uint32_t length);
std::string data_frame(uint32_t stream_id, uint8_t flags, std::string_view data);
std::string syn_stream_frame(uint32_t stream_id, uint32_t associated_id, uint8_t priority, uint8_t flags,
                             std::string_view header_block);
std::string syn_reply_frame(uint32_t stream_id, uint8_t flags, std::string_view header_block);
std::string headers_frame(uint32_t stream_id, uint8_t flags, std::string_view header_block);
std::string rst_stream_frame(uint32_t stream_id, uint32_t status);
std::string settings_frame(const std::vector<Setting>& settings, uint8_t flags = 0);
std::string ping_frame(uint32_t id);
std::string goaway_frame(uint32_t last_good_stream_id, uint32_t status);
std::string window_update_frame(uint32_t stream_id, uint32_t delta);

}  // namespace berth::spdy
