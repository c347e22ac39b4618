// The single-use, expiring tokens behind streaming URLs (kubelet keeps the same limits: one minute,
// a thousand in flight). Nothing is persisted: a berthd restart invalidates every URL.
#include "token_store.h"

#include <sys/random.h>

#include <cerrno>

#include "berth/mutex.h"

namespace berth::streaming {

const char* kind_path(SessionKind kind) {
  switch (kind) {
    case SessionKind::exec: return "exec";
    case SessionKind::attach: return "attach";
    case SessionKind::port_forward: return "portforward";
  }
  return "?";
}

Result<std::string> random_token(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "getrandom");
    }
    got += static_cast<size_t>(n);
  }
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : raw) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 0x3f]);
  return out;
}

TokenStore::TokenStore(std::chrono::milliseconds ttl, size_t capacity, Clock clock)
    : ttl_(ttl), capacity_(capacity), clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return std::chrono::steady_clock::now(); };
}

void TokenStore::drop_expired(std::chrono::steady_clock::time_point now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.expires <= now)
      it = entries_.erase(it);
    else
      ++it;
  }
}

Result<std::string> TokenStore::insert(PendingRequest request) {
  auto token = random_token();
  if (!token.ok()) return token.status().context("make streaming token");
  MutexLock lock(mu_);
  auto now = clock_();
  if (entries_.size() >= capacity_) drop_expired(now);
  if (entries_.size() >= capacity_)
    return Status(Code::resource_exhausted,
                  "streaming server: " + std::to_string(capacity_) + " requests already outstanding");
  entries_.emplace(*token, Entry{std::move(request), now + ttl_});
  return token;
}

std::optional<PendingRequest> TokenStore::consume(const std::string& token) {
  MutexLock lock(mu_);
  auto it = entries_.find(token);
  if (it == entries_.end()) return std::nullopt;
  Entry entry = std::move(it->second);
  entries_.erase(it);
  if (entry.expires <= clock_()) return std::nullopt;
  return std::move(entry.request);
}

void TokenStore::set_ttl(std::chrono::milliseconds ttl) {
  MutexLock lock(mu_);
  ttl_ = ttl;
}

size_t TokenStore::size() {
  MutexLock lock(mu_);
  return entries_.size();
}

}  // namespace berth::streaming
