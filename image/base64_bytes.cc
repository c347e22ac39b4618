// nettle's decoder wants padded input for its final check: a missing '=' is added first.
#include "base64_bytes.h"

#include <nettle/base64.h>

namespace berth {

std::optional<std::string> decode_base64_bytes(const std::string& text, bool url) {
  std::string in = text;
  while (in.size() % 4) in += '=';
  std::string out(BASE64_DECODE_LENGTH(in.size()) + 1, '\0');
  size_t n = 0;
  base64_decode_ctx ctx;
  if (url)
    base64url_decode_init(&ctx);
  else
    base64_decode_init(&ctx);
  if (!base64_decode_update(&ctx, &n, reinterpret_cast<uint8_t*>(out.data()), in.size(), in.data()) ||
      !base64_decode_final(&ctx))
    return std::nullopt;
  out.resize(n);
  return out;
}

}  // namespace berth
