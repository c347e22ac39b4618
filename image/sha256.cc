// OpenSSL's EVP digest API wrapped for the blob store and manifest checks.
#include "sha256.h"

namespace berth {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }

void Sha256::update(const void* data, size_t len) { EVP_DigestUpdate(ctx_.get(), data, len); }

std::string Sha256::digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_.get(), md, &n);
  static const char* hex = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned i = 0; i < n; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

std::string Sha256::of(std::string_view data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.digest();
}

}  // namespace berth
