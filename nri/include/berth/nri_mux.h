// NRI's multiplexing of one unix socket between the plugin's ttrpc service and the runtime's
// (containerd/nri's pkg/net/multiplex): frames of an 8-byte header (connection id, payload length,
// both big-endian) and a payload of one logical connection's bytes. Connection 1 carries the
// Plugin service (the runtime is its client), connection 2 the Runtime service (the plugin is
// its client); 0 is reserved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "berth/status.h"

namespace berth::nri_mux {

constexpr uint32_t kPluginServiceConn = 1;
constexpr uint32_t kRuntimeServiceConn = 2;
constexpr size_t kHeaderBytes = 8;
// A payload holds at most a whole ttrpc frame.
constexpr uint32_t kMaxPayload = 10 + (4u << 20);
// What berth puts in one frame: the reference reader reads a frame whole into a buffer of its
// ttrpc reader's size (4 KiB), so a larger frame may not reach a plugin.
constexpr size_t kSendPayload = 4096;

// `bytes` of connection `conn` as frames of at most kSendPayload each.
std::string encode(uint32_t conn, std::string_view bytes);

struct Piece {
  uint32_t conn = 0;
  std::string payload;
};

// Takes whole frames off the socket's byte stream. A payload over kMaxPayload is a protocol error
// that ends the connection: the error is returned, and again from every later call. A frame of a
// connection the caller has not opened (0 among them) is the caller's to drop, as the reference
// does.
class Demux {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  Result<std::optional<Piece>> next();

 private:
  std::string buffer_;
  Status broken_;
};

}  // namespace berth::nri_mux
