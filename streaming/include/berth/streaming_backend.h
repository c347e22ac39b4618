// What the streaming server asks of the runtime (run a command in a container, attach to one,
// reach a port in a pod) and the file descriptors it gets back. Independent of the CRI protobufs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

struct ExecTarget {
  std::string container_id;
  std::vector<std::string> cmd;
  bool tty = false;
  bool stdin = false;
  bool stdout = false;
  bool stderr = false;  // never with tty: a terminal has one output
  // The client's terminal size when it sent one before the start (tty only; 0 when unknown), so
  // the terminal can have its size before the process first looks at it.
  uint16_t tty_width = 0;
  uint16_t tty_height = 0;
};

struct AttachTarget {
  std::string container_id;
  bool tty = false;
  bool stdin = false;
  bool stdout = false;
  bool stderr = false;
  uint16_t tty_width = 0;  // as in ExecTarget
  uint16_t tty_height = 0;
};

// The running side of an exec or attach session. The server owns every fd from then on (it sets
// them non-blocking) and closes them when the session ends.
struct StreamIo {
  UniqueFd stdin_fd;   // write end; invalid unless stdin was asked for. Closed when the client closes stdin.
  UniqueFd stdout_fd;  // read end (with tty: the terminal's output); invalid unless stdout was asked for
  UniqueFd stderr_fd;  // read end; invalid without stderr (and always with tty)
  UniqueFd done_fd;    // becomes readable once the process has ended (exec) or the attach is over
  // tty only: the client's terminal size. Called on an io thread, so it must not block (an ioctl
  // on a pty master, a datagram to a monitor).
  std::function<void(uint16_t width, uint16_t height)> resize;
  // Called once done_fd is readable, on a worker thread: the exit code, or why there is none.
  // Attach sessions ignore the exit code (kubelet reports success when an attach ends).
  std::function<Result<int>()> outcome;
  // The client went away (or the server is stopping) while the process runs: kill the exec'd
  // process / detach. Called at most once, on a worker thread (may block briefly).
  std::function<void()> cancel;
};

// Implemented by berth's container manager; every call happens on a worker thread, never on an
// io thread, so it may block (runc exec, a connect into a netns).
class StreamingBackend {
 public:
  virtual ~StreamingBackend() = default;
  virtual Result<StreamIo> exec(const ExecTarget& target) = 0;
  virtual Result<StreamIo> attach(const AttachTarget& target) = 0;
  // A connected TCP socket to 127.0.0.1:port inside the sandbox's network namespace
  // (connect_in_netns does the work; see netns_connect.h).
  virtual Result<UniqueFd> connect_port(const std::string& sandbox_id, int32_t port) = 0;
};

}  // namespace berth
