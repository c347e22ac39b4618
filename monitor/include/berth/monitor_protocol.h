// The berthd <-> berth-monitor wire protocol (version 1), the only definition both sides use.
// Persists nothing. Every message is one SOCK_SEQPACKET packet: a Header, then `length` payload
// bytes (a fixed struct for the type, optionally followed by text); fds ride on the same packet as
// SCM_RIGHTS. Host byte order: both ends always run on the same machine.
//
// Control socket (client -> monitor, reply):
//   hello                     -> hello_reply(HelloReply)
//   subscribe_exit            -> nothing now; exited(Exited + reason) when the container exits;
//                                meanwhile log_lost(LogLoss) each time the log file stops taking
//                                records and each time it takes them again
//   reopen_log                -> reopen_done, or error(text) (sent once the new file exists)
//   attach(AttachRequest)     -> attach_fds(AttachReply) + fds [stdin write end][stdout read end]
//                                [stderr read end] (only those present, in that order), or error;
//                                the connection then carries resize(Resize) from the client and
//                                exited(Exited + reason) from the monitor; closing it detaches.
//   anything unknown or of another version -> error(text), with the monitor's version in the header
// Create report (the socket berthd passes as fd 3): spawned(Spawned) from the forking child;
// listening from the monitor once its socket is bound, answered by go from berthd (the monitor
// creates nothing before go: were berthd killed first, the monitor sees the socket close, removes
// its socket and leaves); then created(Created) or create_failed(CreateFailed + runtime's message).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace berth::monitor_protocol {

inline constexpr uint32_t kMagic = 0x4e4d5442;  // "BTMN" in memory on little-endian hosts
inline constexpr uint16_t kVersion = 1;
inline constexpr uint32_t kMaxPayload = 4096;
inline constexpr int kMaxFds = 3;
inline constexpr int kSyncFd = 3;  // where berth-monitor finds the create-report socket

enum class Type : uint16_t {
  hello = 1,
  hello_reply = 2,
  subscribe_exit = 3,
  exited = 4,
  reopen_log = 5,
  reopen_done = 6,
  attach = 7,
  attach_fds = 8,
  resize = 9,
  error = 10,
  spawned = 11,
  created = 12,
  create_failed = 13,
  listening = 14,
  go = 15,
  log_lost = 16,
};

struct Header {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint32_t length;  // payload bytes after the header
};

struct HelloReply {
  uint16_t version;
  uint8_t tty;
  uint8_t has_stdin;
  int32_t monitor_pid;
  int32_t container_pid;
};

struct Exited {
  int32_t exit_code;     // 128 + signal when killed by a signal; -1 when the create failed
  int32_t signal;        // 0 unless killed by a signal
  int64_t exited_at_ns;  // CLOCK_REALTIME, ns since the epoch
};

struct AttachRequest {
  uint8_t want_stdin, want_stdout, want_stderr, reserved;
};

struct AttachReply {
  uint8_t has_stdin, has_stdout, has_stderr, tty;
};

struct Resize {
  uint16_t rows, cols;
};

struct Spawned {
  int32_t monitor_pid;
};

struct Created {
  int32_t container_pid;
  int32_t monitor_pid;
};

// Totals since the monitor started: records (whole lines or line parts) the log file did not take.
struct LogLoss {
  uint64_t records;
  uint64_t bytes;     // of the records' content
  int32_t sys_errno;  // why the last one was lost
  uint32_t writing;   // 0: records are being lost from now on; 1: the file takes them again
};

struct CreateFailed {
  int32_t sys_errno;  // set when the failure is an errno (exec of berth-monitor, a syscall)
};

inline constexpr size_t kMaxPacket = sizeof(Header) + kMaxPayload;

// Writes header + fixed + text into out (kMaxPacket bytes); returns the packet size, 0 when the
// fixed part alone is too big. Text beyond kMaxPayload is cut.
inline size_t encode(Type type, const void* fixed, size_t fixed_len, const char* text, size_t text_len, void* out,
                     uint16_t version = kVersion) {
  if (fixed_len > kMaxPayload) return 0;
  if (text_len > kMaxPayload - fixed_len) text_len = kMaxPayload - fixed_len;  // long messages are cut
  Header h{kMagic, version, static_cast<uint16_t>(type), static_cast<uint32_t>(fixed_len + text_len)};
  auto* p = static_cast<unsigned char*>(out);
  memcpy(p, &h, sizeof h);
  if (fixed_len) memcpy(p + sizeof h, fixed, fixed_len);
  if (text_len) memcpy(p + sizeof h + fixed_len, text, text_len);
  return sizeof h + fixed_len + text_len;
}

struct Message {
  Type type;
  uint16_t version;
  const unsigned char* payload;
  uint32_t length;

  // Copies the fixed part into *fixed; the rest of the payload is text. False when too short.
  template <class T>
  bool fixed(T* out, const char** text = nullptr, size_t* text_len = nullptr) const {
    if (length < sizeof(T)) return false;
    memcpy(out, payload, sizeof(T));
    if (text) *text = reinterpret_cast<const char*>(payload) + sizeof(T);
    if (text_len) *text_len = length - sizeof(T);
    return true;
  }
};

enum class DecodeError { none, short_packet, bad_magic, bad_length, other_version };

// Checks one received packet. other_version still fills `out` (type and version) so the caller can
// answer with an error naming both versions.
inline DecodeError decode(const void* packet, size_t n, Message* out) {
  Header h;
  if (n < sizeof h) return DecodeError::short_packet;
  memcpy(&h, packet, sizeof h);
  if (h.magic != kMagic) return DecodeError::bad_magic;
  if (h.length > kMaxPayload || h.length != n - sizeof h) return DecodeError::bad_length;
  out->type = static_cast<Type>(h.type);
  out->version = h.version;
  out->payload = static_cast<const unsigned char*>(packet) + sizeof h;
  out->length = h.length;
  return h.version == kVersion ? DecodeError::none : DecodeError::other_version;
}

}  // namespace berth::monitor_protocol
