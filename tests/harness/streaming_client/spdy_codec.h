// The test client's own SPDY/3.1 codec — frame layout and zlib header-block compression written
// independently of the server's (streaming/spdy_*), so each checks the other. Client side only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct z_stream_s;

namespace berth::test::spdyc {

using Headers = std::vector<std::pair<std::string, std::string>>;

enum : uint16_t {
  SYN_STREAM = 1,
  SYN_REPLY = 2,
  RST_STREAM = 3,
  SETTINGS = 4,
  PING = 6,
  GOAWAY = 7,
  HEADERS = 8,
  WINDOW_UPDATE = 9
};
constexpr uint8_t FIN = 1;

// The SPDY/3 dictionary, assembled from its word list (the server carries the raw bytes).
const std::string& dictionary();

struct Frame {
  bool control = false;
  uint16_t type = 0;    // control
  uint32_t stream = 0;  // data; for control frames the stream id of the payload when it has one
  uint8_t flags = 0;
  std::string payload;
};

// Splits one frame off the front of `buf`; nothing while incomplete.
std::optional<Frame> take_frame(std::string& buf);
uint32_t be32(std::string_view s, size_t at);

std::string control(uint16_t type, uint8_t flags, const std::string& payload);
std::string data(uint32_t stream, uint8_t flags, std::string_view bytes);
std::string u32(uint32_t v);

class Deflater {
 public:
  Deflater();
  ~Deflater();
  std::string block(const Headers& headers);  // compressed name/value block
 private:
  std::unique_ptr<z_stream_s> z_;
};

class Inflater {
 public:
  Inflater();
  ~Inflater();
  std::optional<Headers> block(std::string_view compressed);

 private:
  std::unique_ptr<z_stream_s> z_;
};

}  // namespace berth::test::spdyc
