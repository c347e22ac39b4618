// The test client's SPDY connection: blocking calls for the test thread, one reader thread.
#include "spdy_client.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "http_upgrade.h"

namespace berth::test {

using namespace spdyc;

namespace {
constexpr int64_t kSessionWindow = 4 << 20;
constexpr size_t kMaxFrame = 16 * 1024;
}  // namespace

Result<std::unique_ptr<SpdyClient>> SpdyClient::dial(const std::string& url, const std::vector<std::string>& protocols,
                                                     Options options, std::chrono::milliseconds timeout) {
  auto up = spdy_upgrade(url, protocols, timeout);
  if (!up.ok()) return up.status();
  std::unique_ptr<SpdyClient> c(new SpdyClient());
  c->opts_ = options;
  c->fd_ = std::move(up->fd);
  c->protocol_ = up->protocol;
  c->rbuf_ = std::move(up->leftover);
  c->session_recv_window_ = 65536;
  if (options.flow_control) {
    std::string settings = u32(1) + u32(7) + u32(uint32_t(options.initial_window));
    auto s = c->send_locked_free(control(SETTINGS, 0, settings) +
                                 control(WINDOW_UPDATE, 0, u32(0) + u32(uint32_t(kSessionWindow - 65536))));
    if (!s.ok()) return s;
    c->session_recv_window_ = kSessionWindow;
  }
  c->thread_ = std::thread([p = c.get()] { p->reader(); });
  return c;
}

SpdyClient::~SpdyClient() {
  if (fd_) ::shutdown(fd_.get(), SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
}

Status SpdyClient::send_locked_free(const std::string& bytes) {
  std::lock_guard lock(write_mu_);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_.get(), bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return errno_status(errno, "spdy client send");
    off += size_t(n);
  }
  return ok_status();
}

uint32_t SpdyClient::open(const Headers& headers, bool fin) {
  uint32_t id;
  std::string frame;
  {
    std::lock_guard lock(mu_);
    id = next_id_;
    next_id_ += 2;
    auto& s = streams_[id];
    s.send_window = peer_initial_window_;
    s.recv_window = opts_.flow_control ? opts_.initial_window : 65536;
    // The block must be compressed in the order the frames go out: under the write lock.
  }
  std::lock_guard wlock(write_mu_);
  std::string block = deflate_.block(headers);
  frame = control(SYN_STREAM, fin ? FIN : 0, u32(id) + u32(0) + std::string(2, '\0') + block);
  size_t off = 0;
  while (off < frame.size()) {
    ssize_t n = ::send(fd_.get(), frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) off += size_t(n);
  }
  return id;
}

Status SpdyClient::write(uint32_t id, std::string_view bytes, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!bytes.empty()) {
    size_t n = std::min(bytes.size(), kMaxFrame);
    if (opts_.flow_control) {
      std::unique_lock lock(mu_);
      auto& s = streams_[id];
      if (!cv_.wait_until(lock, deadline,
                          [&] { return closed_ || s.reset || (s.send_window > 0 && session_send_window_ > 0); }))
        return deadline_exceeded("spdy client: waiting for the server's window");
      if (closed_ || s.reset) return Status(Code::unavailable, "spdy client: stream gone");
      n = size_t(std::min<int64_t>({int64_t(n), s.send_window, session_send_window_}));
      s.send_window -= int64_t(n);
      session_send_window_ -= int64_t(n);
    }
    auto st = send_locked_free(data(id, 0, bytes.substr(0, n)));
    if (!st.ok()) return st;
    bytes.remove_prefix(n);
  }
  return ok_status();
}

Status SpdyClient::finish(uint32_t id) { return send_locked_free(data(id, FIN, "")); }
Status SpdyClient::send_raw(std::string_view bytes) { return send_locked_free(std::string(bytes)); }
Status SpdyClient::ping(uint32_t id) { return send_locked_free(control(PING, 0, u32(id))); }

Result<std::string> SpdyClient::read(uint32_t id, size_t max, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  auto& s = streams_[id];
  if (!cv_.wait_for(lock, timeout, [&] { return !s.in.empty() || s.ended || closed_; }))
    return deadline_exceeded("spdy client: no data on stream " + std::to_string(id));
  return take(id, max, lock);
}

Result<std::pair<uint32_t, std::string>> SpdyClient::read_any(const std::vector<uint32_t>& ids,
                                                              std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  uint32_t found = 0;
  if (!cv_.wait_for(lock, timeout, [&] {
        for (uint32_t id : ids) {
          auto& s = streams_[id];
          if (!s.in.empty() || s.ended || closed_) {
            found = id;
            return true;
          }
        }
        return false;
      }))
    return deadline_exceeded("spdy client: nothing on any stream");
  std::string data = take(found, SIZE_MAX, lock);
  return std::make_pair(found, std::move(data));
}

std::string SpdyClient::take(uint32_t id, size_t max, std::unique_lock<std::mutex>& lock) {
  auto& s = streams_[id];
  size_t n = std::min(max, s.in.size());
  std::string out = s.in.substr(0, n);
  s.in.erase(0, n);
  if (opts_.flow_control && n > 0) {
    s.unacked += int64_t(n);
    s.recv_window += int64_t(n);
    session_unacked_ += int64_t(n);
    session_recv_window_ += int64_t(n);
    std::string updates;
    if (!s.ended && s.unacked >= opts_.initial_window / 2) {
      updates += control(WINDOW_UPDATE, 0, u32(id) + u32(uint32_t(s.unacked)));
      s.unacked = 0;
    }
    if (session_unacked_ >= kSessionWindow / 2) {
      updates += control(WINDOW_UPDATE, 0, u32(0) + u32(uint32_t(session_unacked_)));
      session_unacked_ = 0;
    }
    if (!updates.empty()) {
      lock.unlock();
      (void)send_locked_free(updates);
      lock.lock();
    }
  }
  return out;
}

bool SpdyClient::wait_closed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return closed_; });
}
bool SpdyClient::closed() {
  std::lock_guard lock(mu_);
  return closed_;
}
bool SpdyClient::reset(uint32_t id) {
  std::lock_guard lock(mu_);
  return streams_[id].reset;
}
bool SpdyClient::goaway() {
  std::lock_guard lock(mu_);
  return goaway_;
}
uint64_t SpdyClient::window_violations() {
  std::lock_guard lock(mu_);
  return violations_;
}
uint32_t SpdyClient::pings_answered() {
  std::lock_guard lock(mu_);
  return pings_answered_;
}

void SpdyClient::abort() {
  linger l{1, 0};
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  ::shutdown(fd_.get(), SHUT_RDWR);
}

void SpdyClient::reader() {
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::recv(fd_.get(), buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    rbuf_.append(buf, size_t(n));
    while (auto f = take_frame(rbuf_)) handle(std::move(*f));
  }
  std::lock_guard lock(mu_);
  closed_ = true;
  for (auto& [id, s] : streams_) s.ended = true;
  cv_.notify_all();
}

void SpdyClient::handle(Frame f) {
  std::unique_lock lock(mu_);
  if (!f.control) {
    auto& s = streams_[f.stream];
    s.in += f.payload;
    s.recv_window -= int64_t(f.payload.size());
    session_recv_window_ -= int64_t(f.payload.size());
    if (opts_.flow_control && (s.recv_window < 0 || session_recv_window_ < 0)) ++violations_;
    if (f.flags & FIN) s.ended = true;
    cv_.notify_all();
    return;
  }
  switch (f.type) {
    case SYN_REPLY:
    case HEADERS:
      inflate_.block(std::string_view(f.payload).substr(4));
      streams_[f.stream].replied = true;
      if (f.flags & FIN) streams_[f.stream].ended = true;
      break;
    case RST_STREAM: streams_[f.stream].reset = streams_[f.stream].ended = true; break;
    case SETTINGS: {
      uint32_t count = be32(f.payload, 0);
      for (uint32_t i = 0; i < count; ++i) {
        uint32_t id = be32(f.payload, 4 + 8 * i) & 0xffffff;
        if (id != 7) continue;
        int64_t value = be32(f.payload, 8 + 8 * i);
        for (auto& [sid, s] : streams_) s.send_window += value - peer_initial_window_;
        peer_initial_window_ = value;
      }
      break;
    }
    case WINDOW_UPDATE: {
      int64_t delta = be32(f.payload, 4) & 0x7fffffff;
      if (f.stream == 0)
        session_send_window_ += delta;
      else
        streams_[f.stream].send_window += delta;
      break;
    }
    case PING: {
      uint32_t id = be32(f.payload, 0);
      if (id % 2 == 1) {
        ++pings_answered_;
      } else {
        lock.unlock();
        (void)send_locked_free(control(PING, 0, f.payload));
        lock.lock();
      }
      break;
    }
    case GOAWAY: goaway_ = true; break;
    default: break;
  }
  cv_.notify_all();
}

}  // namespace berth::test
