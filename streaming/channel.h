// Channel: one byte stream between the client and a session — a SPDY stream, or one channel of a
// WebSocket connection — so the remote-command and port-forward logic is written once for both.
// Every call and callback happens on the connection's strand.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace berth::streaming {

class Channel {
 public:
  // Bytes from the client. `consumed` must be called once the bytes have been handed on: it
  // paces the client (SPDY window updates, the next WebSocket read).
  using DataHandler = std::function<void(std::string_view data, std::function<void()> consumed)>;

  virtual ~Channel() = default;
  // Registers the receiver; bytes that arrived earlier are delivered now. `end` runs once: the
  // client closed its side (FIN, v5 close signal), reset the stream, or the connection is gone.
  virtual void on_receive(DataHandler data, std::function<void()> end) = 0;
  // Bytes for the client. `done(true)` once they are on their way and the next may follow;
  // `done(false)` when the channel can take no more (reset, connection gone). Empty data is allowed.
  virtual void send(std::string data, std::function<void(bool ok)> done) = 0;
  // No more bytes from the server on this channel (SPDY FIN; nothing on a WebSocket).
  virtual void finish() = 0;
};

// The upgraded connection a session runs on.
class Connection {
 public:
  virtual ~Connection() = default;
  // Sends what is queued, then closes (GOAWAY / WebSocket close frame).
  virtual void close() = 0;
  // Closes now, as if the client had vanished (the server is stopping).
  virtual void abort() = 0;
};

}  // namespace berth::streaming
