// ForwardPair: one forwarded connection of a port-forward session, independent of SPDY or
// WebSocket: a data channel and an error channel on the client side, a TCP socket into the pod
// (through the backend) on the other. Bytes are copied both ways with half-closes passed on; a
// failure is reported on the error channel.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "blocking_work.h"
#include "channel.h"
#include "fd_pump.h"
#include "server_context.h"

namespace berth::streaming {

class ForwardPair : public std::enable_shared_from_this<ForwardPair> {
 public:
  // spdy: errors are {"closeConnection":..,"message":..} like current kubelet, and the client can
  // half-close its side. WebSocket: errors are the message text, and the pair ends when the pod's
  // side closes (the client has no half-close).
  ForwardPair(ServerContext& ctx, boost::asio::any_io_executor strand, std::string sandbox_id, int32_t port,
              std::shared_ptr<Channel> data, std::shared_ptr<Channel> error, bool spdy, std::function<void()> on_done);
  void start();
  void stop();  // the connection is gone: drop the socket

 private:
  void on_connected(Result<UniqueFd> fd);
  void fail(const std::string& why);
  void maybe_done();

  ServerContext& ctx_;
  boost::asio::any_io_executor strand_;
  std::string sandbox_id_;
  int32_t port_;
  std::shared_ptr<Channel> data_, error_;
  bool spdy_;
  std::function<void()> on_done_;
  std::shared_ptr<Descriptor> socket_;
  std::shared_ptr<OutputPump> out_;
  std::shared_ptr<InputPump> in_;
  bool stopped_ = false, done_ = false, error_finished_ = false;
};

// The error text kubelet writes for a failed forward.
std::string forward_error_message(int32_t port, const std::string& sandbox_id, const std::string& why);

}  // namespace berth::streaming
