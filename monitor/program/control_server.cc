// Control socket connections and attach sessions; see control_server.h and monitor_protocol.h.
#include "control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../packet_io.h"

namespace berth::monitor {

namespace proto = berth::monitor_protocol;

int ControlServer::listen(const char* path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path) return ENAMETOOLONG;
  strcpy(addr.sun_path, path);
  // A live monitor already serving this path (a duplicate container id) keeps its socket.
  UniqueFd probe(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (probe && connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return EADDRINUSE;
  listener_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener_) return errno;
  unlink(path);
  mode_t old = umask(0177);
  int rc = bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old);
  if (rc != 0) return errno;
  path_ = path;
  return ::listen(listener_.get(), 64) == 0 ? 0 : errno;
}

void ControlServer::set_targets(ContainerIo* io, LogFile* log, pid_t container_pid, bool stdin_once) {
  io_ = io;
  log_ = log;
  container_pid_ = container_pid;
  stdin_once_ = stdin_once;
}

void ControlServer::remove_socket() {
  if (path_) unlink(path_);
  path_ = nullptr;
  listener_.reset();
}

int ControlServer::add_pollfds(pollfd* fds, int max) const {
  int n = 0;
  if (listener_ && n < max) fds[n++] = {listener_.get(), POLLIN, 0};
  bool take_stdin = !io_->has_stdin() || io_->stdin_room() > 0;
  for (const auto& c : conns_) {
    if (c.sock && n < max) fds[n++] = {c.sock.get(), POLLIN, 0};
    if (take_stdin && c.stdin_read && n < max) fds[n++] = {c.stdin_read.get(), POLLIN, 0};
  }
  return n;
}

void ControlServer::handle_events(const pollfd* fds, int n) {
  for (int i = 0; i < n; ++i) {
    if (!fds[i].revents) continue;
    int fd = fds[i].fd;
    if (listener_ && fd == listener_.get()) {
      accept_connections();
      continue;
    }
    for (auto& c : conns_) {
      if (c.sock && c.sock.get() == fd)
        on_message(c);
      else if (c.stdin_read && c.stdin_read.get() == fd)
        on_stdin(c);
    }
  }
}

void ControlServer::accept_connections() {
  for (;;) {
    UniqueFd s(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!s) return;
    Connection* slot = nullptr;
    for (auto& c : conns_) {
      if (!c.sock) {
        slot = &c;
        break;
      }
    }
    if (!slot) {
      const char msg[] = "berth-monitor: too many connections";
      proto::send_packet(s.get(), proto::Type::error, nullptr, 0, msg, sizeof msg - 1, nullptr, 0, MSG_DONTWAIT);
      continue;
    }
    *slot = Connection{};
    slot->sock = std::move(s);
  }
}

void ControlServer::send_error(Connection& c, const char* what, int err) {
  char text[512];
  size_t n = strlen(what);
  if (n > 300) n = 300;
  memcpy(text, what, n);
  if (err) {
    const char* e = strerror(err);
    text[n++] = ':';
    text[n++] = ' ';
    size_t el = strlen(e);
    if (el > 200) el = 200;
    memcpy(text + n, e, el);
    n += el;
  }
  proto::send_packet(c.sock.get(), proto::Type::error, nullptr, 0, text, n, nullptr, 0, MSG_DONTWAIT);
}

void ControlServer::on_message(Connection& c) {
  unsigned char buf[proto::kMaxPacket];
  int fds[proto::kMaxFds];
  int nfds = 0;
  ssize_t r = proto::recv_packet(c.sock.get(), buf, fds, &nfds, MSG_DONTWAIT);
  for (int i = 0; i < nfds; ++i) close(fds[i]);  // clients never send fds
  if (r == -EAGAIN) return;
  if (r <= 0) {
    close_connection(c);
    return;
  }
  proto::Message m;
  proto::DecodeError e = proto::decode(buf, static_cast<size_t>(r), &m);
  if (e == proto::DecodeError::other_version) {
    char text[96];
    int n = snprintf(text, sizeof text, "berth-monitor speaks protocol version %u, not %u", proto::kVersion, m.version);
    proto::send_packet(c.sock.get(), proto::Type::error, nullptr, 0, text, static_cast<size_t>(n), nullptr, 0,
                       MSG_DONTWAIT);
    return;
  }
  if (e != proto::DecodeError::none) {
    send_error(c, "malformed message", 0);
    return;
  }
  switch (m.type) {
    case proto::Type::hello: {
      proto::HelloReply h{proto::kVersion, io_->tty(), io_->has_stdin(), getpid(), container_pid_};
      proto::send_packet(c.sock.get(), proto::Type::hello_reply, &h, sizeof h, nullptr, 0, nullptr, 0, MSG_DONTWAIT);
      break;
    }
    case proto::Type::subscribe_exit: c.subscribed = true; break;
    case proto::Type::reopen_log: {
      int err = log_->reopen();
      if (err)
        send_error(c, "reopen log", err);
      else
        proto::send_packet(c.sock.get(), proto::Type::reopen_done, nullptr, 0, nullptr, 0, nullptr, 0, MSG_DONTWAIT);
      break;
    }
    case proto::Type::attach: on_attach(c, m.payload, m.length); break;
    case proto::Type::resize: {
      proto::Resize rz;
      if (m.fixed(&rz)) io_->resize(rz.rows, rz.cols);  // a resize of a non-tty is meaningless, not an error
      break;
    }
    default: send_error(c, "unexpected message type", 0);
  }
}

void ControlServer::on_attach(Connection& c, const void* payload, size_t len) {
  proto::AttachRequest req;
  if (len < sizeof req || c.attached) {
    send_error(c, c.attached ? "already attached on this connection" : "malformed attach", 0);
    return;
  }
  memcpy(&req, payload, sizeof req);
  proto::AttachReply reply{};
  reply.tty = io_->tty();
  UniqueFd client_ends[3];
  int fds[3];
  int nfds = 0;
  auto fail = [&](int err) {
    c.stdin_read.reset();
    c.out[0].reset();
    c.out[1].reset();
    send_error(c, "attach: pipe", err);
  };
  if (req.want_stdin && io_->has_stdin()) {
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return fail(errno);
    c.stdin_read.reset(p[0]);
    client_ends[nfds].reset(p[1]);
    fcntl(p[1], F_SETFL, 0);  // the client's end blocks as pipes normally do
    reply.has_stdin = 1;
    fds[nfds++] = p[1];
  }
  bool want[2] = {req.want_stdout != 0, req.want_stderr != 0 && !io_->tty()};
  for (int s = 0; s < 2; ++s) {
    if (!want[s] || io_->output_fd(static_cast<Stream>(s)) < 0) continue;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return fail(errno);
    c.out[s].reset(p[1]);
    client_ends[nfds].reset(p[0]);
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    (s == 0 ? reply.has_stdout : reply.has_stderr) = 1;
    fds[nfds++] = p[0];
  }
  int err = proto::send_packet(c.sock.get(), proto::Type::attach_fds, &reply, sizeof reply, nullptr, 0, fds, nfds,
                               MSG_DONTWAIT);
  if (err) {
    close_connection(c);
    return;
  }
  c.attached = true;
  c.had_stdin = reply.has_stdin;
}

void ControlServer::on_stdin(Connection& c) {
  char buf[4096];
  size_t room = io_->has_stdin() ? io_->stdin_room() : sizeof buf;
  if (room == 0) return;
  if (room > sizeof buf) room = sizeof buf;
  ssize_t n = read(c.stdin_read.get(), buf, room);
  if (n > 0) {
    if (io_->has_stdin()) io_->push_stdin(buf, static_cast<size_t>(n));
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  c.stdin_read.reset();
  session_stdin_ended(c);
}

void ControlServer::session_stdin_ended(Connection& c) {
  if (!c.had_stdin) return;
  c.had_stdin = false;
  if (stdin_once_ && !stdin_once_used_) {
    stdin_once_used_ = true;
    io_->end_stdin();
  }
}

void ControlServer::close_connection(Connection& c) {
  c.stdin_read.reset();
  session_stdin_ended(c);
  c = Connection{};
}

void ControlServer::copy_output(Stream s, const char* data, size_t n) {
  for (auto& c : conns_) {
    if (!c.out[s]) continue;
    ssize_t w = write(c.out[s].get(), data, n);
    if (w < 0 && errno == EPIPE) {
      c.out[s].reset();  // the client closed its read end
      continue;
    }
    if (w < static_cast<ssize_t>(n)) ++c.dropped;
  }
}

void ControlServer::end_output(Stream s) {
  for (auto& c : conns_) c.out[s].reset();
}

void ControlServer::report_exit(const ExitRecord& r) {
  proto::Exited e{r.exit_code, r.signal, r.exited_at_ns};
  for (auto& c : conns_) {
    if (!c.sock) continue;
    c.out[0].reset();
    c.out[1].reset();
    c.stdin_read.reset();
    if (c.attached || c.subscribed)
      proto::send_packet(c.sock.get(), proto::Type::exited, &e, sizeof e, r.reason, strlen(r.reason), nullptr, 0,
                         MSG_DONTWAIT);
  }
}

bool ControlServer::report_log_loss(const proto::LogLoss& loss) {
  bool delivered = true;
  for (auto& c : conns_) {
    if (!c.sock || !c.subscribed) continue;
    int err = proto::send_packet(c.sock.get(), proto::Type::log_lost, &loss, sizeof loss, nullptr, 0, nullptr, 0,
                                 MSG_DONTWAIT);
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) delivered = false;
  }
  return delivered;
}

}  // namespace berth::monitor
