// The byte caps that keep one streaming session small whatever its client does. Passing a cap
// never grows memory: the session ends (logged), as if the client had vanished, so an exec is
// killed and an attach detached, and everything the session held is freed.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace berth::streaming::limits {

// Bytes queued for the client and not yet taken by the socket, per connection (SPDY frames:
// PING replies, SETTINGS, WINDOW_UPDATE, RST_STREAM, SYN_REPLY, GOAWAY and data; WebSocket:
// pongs, close frames and data). Data never comes near it: the container's output is read only
// while less than kWriteHighWater is queued. What passes it is replies to frames a client keeps
// sending without reading the answers (a PING flood); such a client is cut off.
constexpr size_t kMaxQueuedBytes = 4 << 20;
// Output from the container (or pod socket) is queued for the client only below this mark.
constexpr size_t kWriteHighWater = 512 * 1024;
// Once a session has ended, what is left queued (its last frames, the GOAWAY or close frame) has
// this long to be taken by the client; then the connection is closed anyway, so a client that
// stops reading at the end cannot keep the connection and its queue.
constexpr auto kCloseDrainTimeout = std::chrono::seconds(30);

// Read side. Bytes from the client handed to a session's channels and not yet consumed (written
// to the process's stdin or the pod's socket) pause reading from the client: SPDY at the high
// mark until the low one; WebSocket at its own mark, plus the one message being read (whole).
constexpr uint64_t kInputHighWater = 4 << 20;
constexpr uint64_t kInputLowWater = 1 << 20;
constexpr size_t kWsInputHighWater = 1 << 20;
// A SPDY control frame is buffered whole, so its length is capped; DATA frames are handed on as
// they arrive and need no cap of their own (SPDY's 24-bit length is the limit).
constexpr uint32_t kMaxSpdyControlFrame = 256 * 1024;
// A SPDY header block inflating past this is a compression bomb.
constexpr size_t kMaxSpdyHeaderBlock = 256 * 1024;
// A WebSocket message (all its frames) is read whole before its channel gets it.
constexpr size_t kMaxWsMessage = 4 << 20;
// The HTTP request that asks for the upgrade: its header, its body, and all bytes read with it.
constexpr uint32_t kMaxRequestHeader = 16 * 1024;
constexpr uint64_t kMaxRequestBody = 16 * 1024;
constexpr size_t kMaxRequestBytes = 64 * 1024;
// Connections accepted whose request is not yet read and answered (they need no token, so
// nothing else bounds them); more are closed at once.
constexpr int kMaxPendingRequests = 128;

}  // namespace berth::streaming::limits
