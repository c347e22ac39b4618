// HostilePeer: a streaming client that misbehaves on purpose, for tests and benchmarks. It
// upgrades a URL over a raw TCP socket (SPDY/3.1 or WebSocket), may open the streams a session
// needs, and then writes whatever it is told — floods of PINGs, oversized frames, compression
// bombs — without ever reading unless asked. Also: the kernel's figures of a process (VmRSS,
// threads, bytes written) that the tests bound.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth::test {

class HostilePeer {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  // SPDY/3.1 upgrade offering `protocol` (X-Stream-Protocol-Version).
  static Result<std::unique_ptr<HostilePeer>> spdy(const std::string& url, const std::string& protocol);
  // WebSocket upgrade offering `subprotocol` ("" offers none).
  static Result<std::unique_ptr<HostilePeer>> websocket(const std::string& url, const std::string& subprotocol);
  ~HostilePeer();

  // SPDY: a SYN_STREAM with `headers` (compressed in the connection's context); returns its id.
  Result<uint32_t> open_stream(const Headers& headers, uint8_t flags = 0);
  // SPDY: the streams of a remote command: error, then stdin, stdout, stderr as asked.
  Status open_command_streams(bool in, bool out, bool err);
  // SPDY: one port-forward request (error and data streams).
  Status open_forward_streams(int32_t port);
  Status send(std::string_view bytes);

  struct Flood {
    uint64_t sent = 0;     // bytes the kernel took from us
    bool cut_off = false;  // the server closed the connection
    std::string how;       // what ended the flood
  };
  // Writes `unit` over and over, reading nothing, until the server closes the connection,
  // `limit` bytes are out or `deadline` has passed.
  Flood flood(std::string_view unit, uint64_t limit, std::chrono::milliseconds deadline);
  // Reads until the server closes the connection; what it sent (DEADLINE_EXCEEDED after `timeout`).
  Result<std::string> read_until_closed(std::chrono::milliseconds timeout);
  int fd() const { return fd_.get(); }

  // Frames, written here byte by byte.
  static std::string spdy_ping(uint32_t id);
  static std::string spdy_data(uint32_t stream, uint8_t flags, std::string_view bytes);
  static std::string spdy_control_header(uint16_t type, uint8_t flags, uint32_t length);
  // A client WebSocket frame (masked). Opcodes: 0x2 binary, 0x8 close, 0x9 ping.
  static std::string ws_frame(uint8_t opcode, std::string_view payload, bool fin = true);
  // Only the header of a masked client frame announcing `length` payload bytes (and its mask).
  static std::string ws_frame_header(uint8_t opcode, uint64_t length);

 private:
  struct Compression;
  HostilePeer();
  UniqueFd fd_;
  std::unique_ptr<Compression> z_;
  uint32_t next_id_ = 1;
};

// From /proc/<pid>/status: VmRSS in KiB and the number of threads (0 when unreadable).
uint64_t vm_rss_kib(pid_t pid);
int thread_count(pid_t pid);
// From /proc/<pid>/io: bytes the process has written (wchar).
uint64_t bytes_written(pid_t pid);

}  // namespace berth::test
