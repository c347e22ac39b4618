// The monitor's control socket (SOCK_SEQPACKET, mode 0600) and every connection on it: exit
// subscribers, log reopen requests and attach sessions with their pipes. Persists nothing; the
// socket file is removed when the monitor is done.
#pragma once

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "../exit_record.h"
#include "berth/unique_fd.h"
#include "container_io.h"

namespace berth::monitor {

class ControlServer {
 public:
  // Binds and listens; returns 0 or an errno.
  int listen(const char* path);
  void set_targets(ContainerIo* io, LogFile* log, pid_t container_pid, bool stdin_once);
  // Closes the listener and removes the socket file (a later connect then fails with ENOENT,
  // which tells clients to read the exit file).
  void remove_socket();

  // Poll registration: the listener, each connection, and each session's stdin pipe while the
  // relay can take bytes (or must discard them because the container's stdin is gone).
  int add_pollfds(pollfd* fds, int max) const;
  void handle_events(const pollfd* fds, int n);

  // Output of the container, copied to every session that asked for the stream. A session whose
  // pipe is full loses that chunk (counted); the container, the log and other sessions go on.
  void copy_output(Stream s, const char* data, size_t n);
  void end_output(Stream s);
  // The container exited: session pipes close, then every attached or subscribed connection gets
  // an `exited` message.
  void report_exit(const ExitRecord& r);
  // The log file stopped or started again taking records: every subscriber (berthd) is told.
  // False when a subscriber's socket had no room for it (to be sent again later).
  bool report_log_loss(const monitor_protocol::LogLoss& loss);

 private:
  struct Connection {
    UniqueFd sock;
    bool subscribed = false;
    bool attached = false;
    bool had_stdin = false;
    UniqueFd stdin_read;  // from the client, relayed to the container
    UniqueFd out[2];      // to the client: stdout, stderr
    unsigned long dropped = 0;
  };
  static constexpr int kMaxConnections = 64;

  void accept_connections();
  void on_message(Connection& c);
  void on_stdin(Connection& c);
  void on_attach(Connection& c, const void* payload, size_t len);
  void session_stdin_ended(Connection& c);
  void close_connection(Connection& c);
  void send_error(Connection& c, const char* what, int err);

  const char* path_ = nullptr;
  UniqueFd listener_;
  Connection conns_[kMaxConnections];
  ContainerIo* io_ = nullptr;
  LogFile* log_ = nullptr;
  pid_t container_pid_ = 0;
  bool stdin_once_ = false;
  bool stdin_once_used_ = false;
};

}  // namespace berth::monitor
