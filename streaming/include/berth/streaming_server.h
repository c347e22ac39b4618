// StreamingServer: berth's HTTP server behind the URLs that the CRI Exec, Attach and PortForward
// rpcs return. A client (kubelet's proxy, crictl, kubectl) upgrades the URL's connection to SPDY/3.1
// or WebSocket and speaks the Kubernetes remote-command or port-forward protocol over it; the
// server runs the session against a StreamingBackend. Every session is bounded whatever its client
// does (streaming/session_limits.h): a client that passes a cap is cut off as if it had vanished.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "berth/status.h"
#include "berth/streaming_backend.h"

namespace berth {

struct StreamingServerConfig {
  // host:port to listen on; port 0 picks a free port (address() tells which).
  std::string address = "127.0.0.1:0";
  // Prefix of the returned URLs instead of http://<address>, e.g. when clients reach the server
  // through another name. No trailing slash.
  std::string base_url;
  std::chrono::milliseconds token_ttl = std::chrono::minutes(1);  // an unused URL expires
  size_t max_tokens = 1000;  // outstanding URLs at most; more is RESOURCE_EXHAUSTED
  // A session with no traffic either way this long is closed (kubelet's default: 4 hours).
  std::chrono::milliseconds idle_timeout = std::chrono::hours(4);
  // How long a SPDY client may take to open the streams it announced (kubelet: 30 s).
  std::chrono::milliseconds stream_creation_timeout = std::chrono::seconds(30);
  // After the process ended, output still arriving is forwarded until the pipes reach EOF or stay
  // quiet this long (a background child may hold them open forever).
  std::chrono::milliseconds output_drain_quiet = std::chrono::seconds(1);
  // A tty session waits this long for the client's first terminal size before it starts the
  // process (clients send it at once), so a shell does not start on a 0x0 terminal.
  std::chrono::milliseconds tty_size_wait = std::chrono::seconds(1);
  int io_threads = 2;       // threads running the sockets and pipes (never block)
  int worker_threads = 4;   // threads calling the backend for exec and attach (may block)
  int connect_threads = 2;  // threads connecting port forwards into pods (a pool of their own)
};

class StreamingServer {
 public:
  // Binds, starts the threads and serves until destroyed. `backend` must outlive the server.
  static Result<std::unique_ptr<StreamingServer>> start(StreamingServerConfig config, StreamingBackend& backend);
  // Stops accepting, cancels running sessions (StreamIo::cancel), closes every connection.
  ~StreamingServer();
  StreamingServer(const StreamingServer&) = delete;
  StreamingServer& operator=(const StreamingServer&) = delete;

  const std::string& address() const;  // host:port actually bound ("[::1]:port" for IPv6)

  // Each returns a single-use URL, <base>/exec/<token> (and /attach/, /portforward/). Invalid
  // targets are INVALID_ARGUMENT; more than max_tokens outstanding is RESOURCE_EXHAUSTED.
  Result<std::string> register_exec(ExecTarget target);
  Result<std::string> register_attach(AttachTarget target);
  // SPDY clients name the port of each forwarded connection in its streams; WebSocket clients get
  // `ports` (or, when empty, the URL's ?port= query values), one channel pair per port.
  Result<std::string> register_port_forward(std::string sandbox_id, std::vector<int32_t> ports = {});

  // New token_ttl and idle_timeout (berthd's config reload): URLs handed out and sessions opened
  // from now on get them; those outstanding keep the ones they began with.
  void set_timeouts(std::chrono::milliseconds token_ttl, std::chrono::milliseconds idle_timeout);

  size_t active_sessions() const;  // upgraded connections still open (for tests and metrics)

  struct Impl;

 private:
  explicit StreamingServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth
