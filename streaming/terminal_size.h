// The resize stream of a tty session: a sequence of JSON objects {"Width":W,"Height":H} that may
// arrive split across or packed into frames (Go's json.Encoder writes one after another).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace berth::streaming {

struct TerminalSize {
  uint16_t width = 0;
  uint16_t height = 0;
};

class TerminalSizeDecoder {
 public:
  // Feeds bytes; returns the sizes completed by them. Malformed objects are skipped; a runaway
  // object (over 4 KiB) resets the decoder.
  std::vector<TerminalSize> feed(std::string_view bytes);

 private:
  std::string pending_;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false;
};

}  // namespace berth::streaming
