// The misbehaving streaming peer of the tests and benchmarks: raw upgrades, raw frames, floods.
#include "berth/test/hostile_peer.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "http_upgrade.h"
#include "spdy_codec.h"

namespace berth::test {

using Clock = std::chrono::steady_clock;

struct HostilePeer::Compression {
  spdyc::Deflater deflate;
};

HostilePeer::HostilePeer() : z_(std::make_unique<Compression>()) {}
HostilePeer::~HostilePeer() = default;

namespace {

Result<std::string> read_response_head(int fd, std::chrono::milliseconds timeout) {
  std::string in;
  auto deadline = Clock::now() + timeout;
  while (in.find("\r\n\r\n") == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) return deadline_exceeded("upgrade response");
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return internal_error("connection closed before the upgrade response");
    in.append(buf, size_t(n));
  }
  return in;
}

}  // namespace

Result<std::unique_ptr<HostilePeer>> HostilePeer::spdy(const std::string& url, const std::string& protocol) {
  auto up = spdy_upgrade(url, {protocol}, std::chrono::seconds(30));
  if (!up.ok()) return up.status();
  std::unique_ptr<HostilePeer> p(new HostilePeer());
  p->fd_ = std::move(up->fd);
  return p;
}

Result<std::unique_ptr<HostilePeer>> HostilePeer::websocket(const std::string& url, const std::string& subprotocol) {
  auto u = parse_url(url);
  if (!u.ok()) return u.status();
  auto fd = tcp_connect(*u);
  if (!fd.ok()) return fd.status();
  std::string req = "GET " + u->target + " HTTP/1.1\r\nHost: " + u->host + ":" + u->port +
                    "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
  if (!subprotocol.empty()) req += "Sec-WebSocket-Protocol: " + subprotocol + "\r\n";
  req += "\r\n";
  std::unique_ptr<HostilePeer> p(new HostilePeer());
  p->fd_ = std::move(*fd);
  if (auto s = p->send(req); !s.ok()) return s;
  auto head = read_response_head(p->fd_.get(), std::chrono::seconds(30));
  if (!head.ok()) return head.status();
  if (head->rfind("HTTP/1.1 101", 0) != 0) return http_refusal(std::atoi(head->c_str() + 9), *head);
  return p;
}

Result<uint32_t> HostilePeer::open_stream(const Headers& headers, uint8_t flags) {
  uint32_t id = next_id_;
  next_id_ += 2;
  std::string block = z_->deflate.block(headers);
  std::string payload = spdyc::u32(id) + spdyc::u32(0) + std::string(2, '\0') + block;
  if (auto s = send(spdyc::control(spdyc::SYN_STREAM, flags, payload)); !s.ok()) return s;
  return id;
}

Status HostilePeer::open_command_streams(bool in, bool out, bool err) {
  for (auto [type, want] : {std::pair{"error", true}, {"stdin", in}, {"stdout", out}, {"stderr", err}}) {
    if (!want) continue;
    auto id = open_stream({{"streamtype", type}});
    if (!id.ok()) return id.status();
  }
  return ok_status();
}

Status HostilePeer::open_forward_streams(int32_t port) {
  std::string request = std::to_string(next_id_);
  for (const char* type : {"error", "data"}) {
    auto id = open_stream({{"streamtype", type}, {"port", std::to_string(port)}, {"requestid", request}});
    if (!id.ok()) return id.status();
  }
  return ok_status();
}

Status HostilePeer::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd_.get(), POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0) return errno_status(errno, "hostile peer send");
    bytes.remove_prefix(size_t(n));
  }
  return ok_status();
}

HostilePeer::Flood HostilePeer::flood(std::string_view unit, uint64_t limit, std::chrono::milliseconds deadline) {
  std::string batch;
  while (batch.size() < 64 * 1024) batch.append(unit);
  Flood f;
  auto end = Clock::now() + deadline;
  size_t off = 0;
  while (f.sent < limit) {
    ssize_t n = ::send(fd_.get(), batch.data() + off, batch.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      f.sent += uint64_t(n);
      off = (off + size_t(n)) % batch.size();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      if (left.count() <= 0) {
        f.how = "deadline: the server neither reads nor closes";
        return f;
      }
      pollfd p{fd_.get(), POLLOUT, 0};
      ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
      continue;
    }
    f.cut_off = true;
    f.how = n < 0 ? std::strerror(errno) : "closed";
    return f;
  }
  f.how = "limit reached";
  return f;
}

Result<std::string> HostilePeer::read_until_closed(std::chrono::milliseconds timeout) {
  std::string in;
  auto end = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    pollfd p{fd_.get(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) return deadline_exceeded("server did not close");
    char buf[65536];
    ssize_t n = ::recv(fd_.get(), buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return in;  // EOF or reset
    in.append(buf, size_t(n));
  }
}

std::string HostilePeer::spdy_control_header(uint16_t type, uint8_t flags, uint32_t length) {
  return std::string{char(0x80), char(3), char(type >> 8), char(type & 0xff)} +
         spdyc::u32((uint32_t(flags) << 24) | (length & 0xffffff));
}

std::string HostilePeer::spdy_ping(uint32_t id) { return spdy_control_header(spdyc::PING, 0, 4) + spdyc::u32(id); }

std::string HostilePeer::spdy_data(uint32_t stream, uint8_t flags, std::string_view bytes) {
  return spdyc::data(stream, flags, bytes);
}

std::string HostilePeer::ws_frame_header(uint8_t opcode, uint64_t length) {
  std::string h{char(0x80 | opcode)};
  if (length < 126) {
    h += char(0x80 | length);
  } else if (length < 65536) {
    h += char(0x80 | 126);
    h += char(length >> 8);
    h += char(length & 0xff);
  } else {
    h += char(0x80 | 127);
    for (int shift = 56; shift >= 0; shift -= 8) h += char((length >> shift) & 0xff);
  }
  return h + "\x11\x22\x33\x44";
}

std::string HostilePeer::ws_frame(uint8_t opcode, std::string_view payload, bool fin) {
  std::string f = ws_frame_header(opcode, payload.size());
  if (!fin) f[0] = char(f[0] & 0x7f);
  const char mask[4] = {0x11, 0x22, 0x33, 0x44};
  for (size_t i = 0; i < payload.size(); ++i) f += char(payload[i] ^ mask[i % 4]);
  return f;
}

namespace {

uint64_t proc_field(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) != 0) continue;
    std::istringstream fields(line.substr(name.size()));
    uint64_t v = 0;
    fields >> v;
    return v;
  }
  return 0;
}

}  // namespace

uint64_t vm_rss_kib(pid_t pid) { return proc_field("/proc/" + std::to_string(pid) + "/status", "VmRSS:"); }
int thread_count(pid_t pid) { return int(proc_field("/proc/" + std::to_string(pid) + "/status", "Threads:")); }
uint64_t bytes_written(pid_t pid) { return proc_field("/proc/" + std::to_string(pid) + "/io", "wchar:"); }

}  // namespace berth::test
