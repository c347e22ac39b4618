// Fuzz target: SPDY/3 header blocks (streaming/spdy_headers.h): the name/value block decoder, and
// the zlib decompression context a connection keeps for all the blocks a client sends (with the
// SPDY/3 dictionary and the bomb limit). The first byte picks the mode:
//   0: the input is one raw (inflated) name/value block;
//   1: the input is a series of compressed blocks, each with a 2-byte length, through one
//      decompressor whose limit comes from the next byte;
//   2: the input is a header list, compressed by berth and inflated again (a round trip).
#include <cctype>

#include "fuzz_support.h"
#include "spdy_headers.h"

namespace spdy = berth::spdy;
using berth::fuzz::Reader;

namespace {

void raw_block(std::string_view raw) {
  auto headers = spdy::decode_header_block(raw);
  if (!headers) return;
  for (const auto& [name, value] : *headers) {
    for (char c : name) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    (void)value;
  }
  // berth's encoder writes what the decoder read: decoding that again gives the same list.
  auto again = spdy::decode_header_block(spdy::encode_header_block(*headers));
  FUZZ_CHECK(again && *again == *headers);
  if (!headers->empty()) (void)spdy::find_header(*headers, headers->front().first);
}

void compressed_blocks(Reader& in) {
  size_t limit = 1 + size_t(in.byte()) * 64;  // small limits reach the bomb check quickly
  spdy::HeaderDecompressor d(in.byte() & 1 ? limit : 256 * 1024);
  bool broken = false;
  while (!in.empty()) {
    auto block = in.piece(4096);
    auto headers = d.decompress(block);
    // Once inflating failed, the context is out of step with the client: nothing more decodes.
    if (broken) FUZZ_CHECK(!headers.ok());
    if (!headers.ok() && headers.status().message().find("name/value") == std::string::npos) broken = true;
  }
}

void round_trip(Reader& in) {
  spdy::HeaderCompressor c;
  spdy::HeaderDecompressor d;
  for (int block = 0; block < 4 && !in.empty(); ++block) {
    spdy::HeaderList list;
    size_t count = in.byte() % 8;
    for (size_t i = 0; i < count; ++i) {
      std::string name(in.piece(64));
      std::string value(in.piece(300));
      for (char& ch : name) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      list.emplace_back(std::move(name), std::move(value));
    }
    auto packed = c.compress(list);
    FUZZ_CHECK(packed.ok());
    auto back = d.decompress(*packed);
    FUZZ_CHECK(back.ok() && *back == list);
  }
}

}  // namespace

BERTH_FUZZ_TARGET(spdy_headers) {
  Reader in(data, size);
  switch (in.byte() % 3) {
    case 0: {
      std::string raw(in.rest());
      raw_block(raw);
      break;
    }
    case 1: compressed_blocks(in); break;
    default: round_trip(in);
  }
  return 0;
}
