// TokenStore: the pending requests behind the URLs the server hands out, keyed by a random token.
// Tokens are single use, expire after a TTL, and at most `capacity` are outstanding. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "berth/mutex.h"
#include "berth/status.h"
#include "berth/streaming_backend.h"

namespace berth::streaming {

enum class SessionKind { exec, attach, port_forward };

const char* kind_path(SessionKind kind);  // "exec", "attach", "portforward"

struct PendingRequest {
  SessionKind kind = SessionKind::exec;
  ExecTarget exec;
  AttachTarget attach;
  std::string sandbox_id;
  std::vector<int32_t> ports;
};

class TokenStore {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  TokenStore(std::chrono::milliseconds ttl, size_t capacity, Clock clock = {});

  // A fresh URL-safe token (32 random bytes from getrandom) for `request`.
  Result<std::string> insert(PendingRequest request);
  // The request behind `token`, removed; nothing when unknown, already used or expired.
  std::optional<PendingRequest> consume(const std::string& token);
  size_t size();
  // The lifetime of tokens inserted from now on (a config reload); outstanding ones keep theirs.
  void set_ttl(std::chrono::milliseconds ttl);

 private:
  struct Entry {
    PendingRequest request;
    std::chrono::steady_clock::time_point expires;
  };
  void drop_expired(std::chrono::steady_clock::time_point now) BERTH_REQUIRES(mu_);

  std::chrono::milliseconds ttl_ BERTH_GUARDED_BY(mu_);
  size_t capacity_;
  Clock clock_;
  Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ BERTH_GUARDED_BY(mu_);
};

// n random bytes from getrandom(2), base64url without padding.
Result<std::string> random_token(size_t bytes = 32);

}  // namespace berth::streaming
