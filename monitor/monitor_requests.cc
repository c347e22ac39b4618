// berthd's one-shot requests to a running monitor: hello (who it serves), log reopen and attach (with the session's
// resize and exit wait). Persists nothing.
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "berth/monitor.h"
#include "monitor_connection.h"

namespace berth {

namespace proto = berth::monitor_protocol;
using monitor_connection::Clock;

namespace {

Status connect_error(int err, const std::string& what) {
  Code code = err == ENOENT || err == ECONNREFUSED ? Code::not_found
              : err == EAGAIN                      ? Code::unavailable
                                                   : Code::internal;
  return errno_status(err, what + ": connect to berth-monitor", code);
}

}  // namespace

Result<MonitorHello> monitor_hello(const std::string& socket_path, std::chrono::milliseconds timeout) {
  const std::string what = "hello via " + socket_path;
  UniqueFd conn;
  if (int err = monitor_connection::connect_monitor(socket_path, &conn)) return connect_error(err, what);
  Status s = monitor_connection::send_request(conn.get(), proto::Type::hello, nullptr, 0, what);
  if (!s.ok()) return s;
  monitor_connection::Reply reply;
  s = monitor_connection::receive_reply(conn.get(), Clock::now() + timeout, &reply, what);
  if (!s.ok()) return s.code() == Code::unavailable ? Status(Code::not_found, s.message()) : s;
  proto::HelloReply h;
  if (reply.type != proto::Type::hello_reply || reply.fixed_len < sizeof h)
    return internal_error(what + ": unexpected reply from berth-monitor");
  memcpy(&h, reply.fixed, sizeof h);
  return MonitorHello{h.monitor_pid, h.container_pid};
}

Status reopen_log(const std::string& socket_path, std::chrono::milliseconds timeout) {
  const std::string what = "reopen log via " + socket_path;
  UniqueFd conn;
  if (int err = monitor_connection::connect_monitor(socket_path, &conn)) return connect_error(err, what);
  Status s = monitor_connection::send_request(conn.get(), proto::Type::reopen_log, nullptr, 0, what);
  if (!s.ok()) return s;
  monitor_connection::Reply reply;
  s = monitor_connection::receive_reply(conn.get(), Clock::now() + timeout, &reply, what);
  if (!s.ok()) return s;
  if (reply.type != proto::Type::reopen_done) return internal_error(what + ": unexpected reply from berth-monitor");
  return ok_status();
}

Result<AttachSession> attach(const std::string& socket_path, const AttachOptions& opts) {
  const std::string what = "attach via " + socket_path;
  AttachSession session;
  if (int err = monitor_connection::connect_monitor(socket_path, &session.conn_)) return connect_error(err, what);
  proto::AttachRequest req{opts.want_stdin, opts.want_stdout, opts.want_stderr, 0};
  Status s = monitor_connection::send_request(session.conn_.get(), proto::Type::attach, &req, sizeof req, what);
  if (!s.ok()) return s;
  monitor_connection::Reply reply;
  s = monitor_connection::receive_reply(session.conn_.get(), Clock::now() + opts.timeout, &reply, what);
  if (!s.ok()) return s;
  proto::AttachReply a;
  if (reply.type != proto::Type::attach_fds || reply.fixed_len < sizeof a)
    return internal_error(what + ": unexpected reply from berth-monitor");
  memcpy(&a, reply.fixed, sizeof a);
  int expected = a.has_stdin + a.has_stdout + a.has_stderr;
  if (reply.nfds != expected) return internal_error(what + ": berth-monitor sent the wrong number of fds");
  int i = 0;
  if (a.has_stdin) session.stdin_fd = std::move(reply.fds[i++]);
  if (a.has_stdout) session.stdout_fd = std::move(reply.fds[i++]);
  if (a.has_stderr) session.stderr_fd = std::move(reply.fds[i++]);
  if (opts.want_stdin && !a.has_stdin)
    return failed_precondition(what + ": the container has no open stdin (not requested, or closed after stdin_once)");
  session.tty = a.tty;
  session.socket_path_ = socket_path;
  return session;
}

Status AttachSession::resize(unsigned rows, unsigned cols) {
  const std::string what = "resize via " + socket_path_;
  if (!conn_) return failed_precondition(what + ": session is closed");
  proto::Resize r{static_cast<uint16_t>(rows), static_cast<uint16_t>(cols)};
  return monitor_connection::send_request(conn_.get(), proto::Type::resize, &r, sizeof r, what);
}

Result<ExitInfo> AttachSession::wait_exit(std::chrono::milliseconds timeout) {
  const std::string what = "wait for exit via " + socket_path_;
  if (!conn_) return failed_precondition(what + ": session is closed");
  monitor_connection::Reply reply;
  Status s = monitor_connection::receive_reply(conn_.get(), Clock::now() + timeout, &reply, what);
  if (!s.ok()) return s;
  ExitInfo info;
  if (!monitor_connection::exit_info_from(reply, &info))
    return internal_error(what + ": unexpected message from berth-monitor");
  return info;
}

}  // namespace berth
