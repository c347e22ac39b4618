// Incremental sha256 (OpenSSL EVP) for verifying content while it streams in.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>

namespace berth {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t len);
  // "sha256:<hex>"; the hasher is finished afterwards.
  std::string digest();
  static std::string of(std::string_view data);

 private:
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx_;
};

}  // namespace berth
