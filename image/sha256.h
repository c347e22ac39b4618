// Incremental sha256 (nettle) for verifying content while it streams in.
#pragma once

#include <nettle/sha2.h>

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
  sha256_ctx ctx_;
};

}  // namespace berth
