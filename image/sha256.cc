// nettle's sha256 wrapped for the blob store and manifest checks.
#include "sha256.h"

namespace berth {

Sha256::Sha256() { sha256_init(&ctx_); }

void Sha256::update(const void* data, size_t len) { sha256_update(&ctx_, len, static_cast<const uint8_t*>(data)); }

std::string Sha256::digest() {
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx_, sizeof md, md);
  static const char* hex = "0123456789abcdef";
  std::string out = "sha256:";
  for (uint8_t b : md) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

std::string Sha256::of(std::string_view data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.digest();
}

}  // namespace berth
