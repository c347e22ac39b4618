// A client of the Kubernetes streaming protocols for berth's tests: exec/attach (remote command)
// and port forwarding, over SPDY/3.1 (its own framing and header compression, independent of the
// server's) or WebSocket (Boost.Beast). Point it at a URL from Exec, Attach or PortForward.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/status.h"

namespace berth::test {

enum class Transport { spdy, websocket };

struct StreamOptions {
  Transport transport = Transport::spdy;
  // SPDY: the X-Stream-Protocol-Version offers; WebSocket: the Sec-WebSocket-Protocol offers
  // (empty: none). In the client's order of preference.
  std::vector<std::string> protocols = {"v4.channel.k8s.io"};
  // Which streams to open; must match what the URL was registered with.
  bool stdin = false;
  bool stdout = true;
  bool stderr = true;
  bool tty = false;
  // SPDY only: take part in flow control (SETTINGS, WINDOW_UPDATE, honour the server's windows).
  // false behaves like Go's spdystream (kubectl, crictl), which does neither.
  bool spdy_flow_control = true;
  std::chrono::milliseconds timeout = std::chrono::seconds(30);
};

struct CommandResult {
  std::string out;
  std::string err;
  std::string error_stream;      // raw bytes of the error stream / channel 3
  std::optional<int> exit_code;  // from a v4+ Status object (Success: 0)
  bool ended = false;            // the server ended the session (false: the wait timed out)
};

class RemoteCommandClient {
 public:
  // Upgrades the connection and opens the streams. A refused upgrade is an error whose message
  // starts with "http <code>: " (http_status_of tells the code).
  static Result<std::unique_ptr<RemoteCommandClient>> connect(const std::string& url, const StreamOptions& options);
  virtual ~RemoteCommandClient() = default;

  virtual const std::string& protocol() const = 0;  // negotiated version / subprotocol
  virtual Status send_stdin(std::string_view data) = 0;
  // SPDY: FIN on the stdin stream; WebSocket v5: the close signal; older WebSocket: UNIMPLEMENTED.
  virtual Status close_stdin() = 0;
  virtual Status resize(uint16_t width, uint16_t height) = 0;
  // Waits until the collected stdout contains `text`.
  virtual bool wait_stdout(std::string_view text, std::chrono::milliseconds timeout) = 0;
  // Collects stdout, stderr and the error stream until the server closes the session.
  virtual CommandResult wait(std::chrono::milliseconds timeout) = 0;
  virtual void abort() = 0;                             // vanish: drop the TCP connection without a goodbye
  virtual Status send_raw(std::string_view bytes) = 0;  // bytes straight onto the upgraded connection
  virtual uint64_t window_violations() = 0;             // SPDY with flow control: DATA beyond the windows granted
  // SPDY: sends a PING and waits for the server's echo; WebSocket: UNIMPLEMENTED.
  virtual Status ping(std::chrono::milliseconds timeout) = 0;
};

// connect, write `stdin_data` (then close stdin when asked), wait for the end.
Result<CommandResult> run_command(const std::string& url, const StreamOptions& options,
                                  std::string_view stdin_data = {}, bool close_stdin = true);

// The HTTP status of a refused upgrade, 0 for other errors.
int http_status_of(const Status& status);

class PortForwardClient {
 public:
  class Stream {  // one forwarded connection
   public:
    virtual ~Stream() = default;
    virtual int32_t port() const = 0;
    virtual Status write(std::string_view data) = 0;
    virtual Status close_write() = 0;  // SPDY: FIN on the data stream; WebSocket: UNIMPLEMENTED
    // Up to `max` bytes; "" at the end of the stream; DEADLINE_EXCEEDED on timeout.
    virtual Result<std::string> read(size_t max, std::chrono::milliseconds timeout) = 0;
    Result<std::string> read_exact(size_t n, std::chrono::milliseconds timeout);
    std::string read_to_end(std::chrono::milliseconds timeout);
    // What the server wrote on the error stream/channel (waits up to `timeout` for something).
    virtual std::string error_text(std::chrono::milliseconds timeout) = 0;
  };

  // SPDY (options.protocols default: portforward.k8s.io): streams are opened by open().
  // WebSocket: `ws_ports` (sent as ?port= unless empty) gives one channel pair per entry.
  static Result<std::unique_ptr<PortForwardClient>> connect(const std::string& url, StreamOptions options,
                                                            std::vector<int32_t> ws_ports = {});
  virtual ~PortForwardClient() = default;
  virtual const std::string& protocol() const = 0;
  // SPDY: a new error+data stream pair for `port`; WebSocket: the next unused pair for it.
  virtual Result<Stream*> open(int32_t port) = 0;
  virtual bool wait_closed(std::chrono::milliseconds timeout) = 0;  // the server closed the connection
  virtual uint64_t window_violations() = 0;
};

}  // namespace berth::test
