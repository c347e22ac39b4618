// berthd's end of one connection to a monitor's control socket: connect, send a request, wait
// (bounded) for the reply. Persists nothing.
#pragma once

#include <chrono>
#include <string>

#include "berth/monitor.h"
#include "berth/monitor_protocol.h"
#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth::monitor_connection {

using Clock = std::chrono::steady_clock;

// 0 or the connect errno (ENOENT: no socket file; ECONNREFUSED: nobody listens; EAGAIN: the
// monitor is not accepting). The socket is non-blocking.
int connect_monitor(const std::string& path, UniqueFd* out);

struct Reply {
  monitor_protocol::Type type{};
  unsigned char fixed[64] = {};
  size_t fixed_len = 0;  // payload bytes copied into fixed
  std::string payload;   // the whole payload, for text after the fixed part
  UniqueFd fds[monitor_protocol::kMaxFds];
  int nfds = 0;
};

Status send_request(int fd, monitor_protocol::Type type, const void* fixed, size_t len, const std::string& what);

// unavailable when the monitor closed the connection; deadline_exceeded on timeout; an `error`
// reply becomes a Status carrying the monitor's text.
Status receive_reply(int fd, Clock::time_point deadline, Reply* out, const std::string& what);

// An `exited` message's payload as ExitInfo; false when malformed.
bool exit_info_from(const Reply& r, ExitInfo* out);

}  // namespace berth::monitor_connection
