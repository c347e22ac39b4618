// Request/reply over a monitor's SOCK_SEQPACKET control socket; see monitor_connection.h.
#include "monitor_connection.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "packet_io.h"

namespace berth::monitor_connection {

namespace proto = berth::monitor_protocol;

int connect_monitor(const std::string& path, UniqueFd* out) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return ENAMETOOLONG;
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking throughout: a stopped monitor with a full backlog answers EAGAIN instead of
  // holding a berthd thread in connect(), and replies are awaited with poll and a deadline.
  UniqueFd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s) return errno;
  while (connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINTR) return errno;
  }
  *out = std::move(s);
  return 0;
}

Status send_request(int fd, proto::Type type, const void* fixed, size_t len, const std::string& what) {
  int err = proto::send_packet(fd, type, fixed, len, nullptr, 0);
  if (err) {
    Code code = err == EPIPE || err == EAGAIN || err == ECONNRESET ? Code::unavailable : Code::internal;
    return errno_status(err, what + ": send to berth-monitor", code);
  }
  return ok_status();
}

Status receive_reply(int fd, Clock::time_point deadline, Reply* out, const std::string& what) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return deadline_exceeded(what + ": berth-monitor did not answer in time");
    pollfd p{fd, POLLIN, 0};
    int pr = poll(&p, 1, static_cast<int>(left));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) return errno_status(errno, what + ": poll");
    if (pr == 0) continue;
    unsigned char buf[proto::kMaxPacket];
    int fds[proto::kMaxFds];
    int nfds = 0;
    ssize_t r = proto::recv_packet(fd, buf, fds, &nfds, MSG_DONTWAIT);
    if (r == -EAGAIN || r == -EINTR) continue;
    for (int i = 0; i < nfds; ++i) out->fds[i].reset(fds[i]);
    out->nfds = nfds;
    if (r == 0 || r == -ECONNRESET) return Status(Code::unavailable, what + ": berth-monitor closed the connection");
    if (r < 0) return errno_status(static_cast<int>(-r), what + ": receive from berth-monitor");
    proto::Message m;
    proto::DecodeError e = proto::decode(buf, static_cast<size_t>(r), &m);
    if (e != proto::DecodeError::none && !(e == proto::DecodeError::other_version && m.type == proto::Type::error))
      return internal_error(what + ": malformed reply from berth-monitor");
    out->type = m.type;
    out->payload.assign(reinterpret_cast<const char*>(m.payload), m.length);
    out->fixed_len = std::min<size_t>(m.length, sizeof out->fixed);
    memcpy(out->fixed, m.payload, out->fixed_len);
    if (m.type == proto::Type::error) return internal_error(what + ": berth-monitor: " + out->payload);
    return ok_status();
  }
}

bool exit_info_from(const Reply& r, ExitInfo* out) {
  proto::Exited e;
  if (r.type != proto::Type::exited || r.payload.size() < sizeof e) return false;
  memcpy(&e, r.payload.data(), sizeof e);
  out->exit_code = e.exit_code;
  out->signal = e.signal;
  out->exited_at_ns = e.exited_at_ns;
  out->reason = r.payload.substr(sizeof e);
  return true;
}

}  // namespace berth::monitor_connection
