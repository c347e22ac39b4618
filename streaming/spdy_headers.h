// SPDY/3 header blocks: the name/value block format and its zlib compression with the SPDY/3
// dictionary. Each direction of a connection has one compression context for its whole life.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/status.h"

struct z_stream_s;

namespace berth::spdy {

extern const unsigned char kHeaderDictionary[];
extern const size_t kHeaderDictionarySize;

// Names are lowercase on the wire; a value may hold several values separated by NUL bytes.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

std::string encode_header_block(const HeaderList& headers);
// Names come back lowercased; nothing when the block is malformed.
std::optional<HeaderList> decode_header_block(std::string_view raw);
// The first value of `name` (case-insensitive), "" when absent.
std::string find_header(const HeaderList& headers, std::string_view name);

class HeaderCompressor {
 public:
  HeaderCompressor();
  ~HeaderCompressor();
  HeaderCompressor(const HeaderCompressor&) = delete;
  HeaderCompressor& operator=(const HeaderCompressor&) = delete;
  Result<std::string> compress(const HeaderList& headers);

 private:
  std::unique_ptr<z_stream_s> zs_;
  bool ok_ = false;
};

class HeaderDecompressor {
 public:
  // A block inflating past `max_block` bytes is an error (a compression bomb ends the session).
  explicit HeaderDecompressor(size_t max_block = 256 * 1024);
  ~HeaderDecompressor();
  HeaderDecompressor(const HeaderDecompressor&) = delete;
  HeaderDecompressor& operator=(const HeaderDecompressor&) = delete;
  Result<HeaderList> decompress(std::string_view compressed);

 private:
  std::unique_ptr<z_stream_s> zs_;
  bool ok_ = false;
  size_t max_block_;
};

}  // namespace berth::spdy
