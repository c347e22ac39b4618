// CommandSession: one exec or attach, independent of SPDY or WebSocket. It starts the process
// through the backend, copies stdin/stdout/stderr between its fds and the client's channels,
// applies resizes, waits for the end (process exit, then the output drained), writes the exit
// status on the error channel and closes the connection. When the client vanishes first it
// cancels the process and frees everything.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "blocking_work.h"
#include "channel.h"
#include "exit_status.h"
#include "fd_pump.h"
#include "server_context.h"
#include "terminal_size.h"
#include "token_store.h"

namespace berth::streaming {

struct CommandChannels {
  std::shared_ptr<Channel> stdin, stdout, stderr, resize, error;
  bool status_json = false;  // v4+: Status JSON on the error channel
};

class CommandSession : public std::enable_shared_from_this<CommandSession> {
 public:
  CommandSession(ServerContext& ctx, boost::asio::any_io_executor strand, PendingRequest request,
                 CommandChannels channels, std::weak_ptr<Connection> conn);
  void start();
  // The connection is over; lost: the client vanished (cancel the process), false: we closed it.
  void connection_closed(bool lost);

 private:
  enum class State { starting, running, exited, finishing, over };
  void launch();
  void on_started(Result<StreamIo> io);
  void on_resize(std::string_view data);
  void on_exit();
  void arm_drain();
  void check_drain();
  void resume_drain();
  void maybe_finish();
  void finish_with(std::string message);
  void release(bool cancel);
  bool outputs_done() const;

  ServerContext& ctx_;
  boost::asio::any_io_executor strand_;
  PendingRequest req_;
  SessionVerb verb_;
  CommandChannels ch_;
  std::weak_ptr<Connection> conn_;
  State state_ = State::starting;
  TerminalSizeDecoder sizes_;
  std::optional<TerminalSize> pending_size_;
  std::function<void(uint16_t, uint16_t)> resize_;
  std::function<Result<int>()> outcome_;
  std::function<void()> cancel_;
  std::shared_ptr<InputPump> stdin_pump_;
  std::shared_ptr<OutputPump> stdout_pump_, stderr_pump_;
  std::shared_ptr<Descriptor> done_fd_;
  boost::asio::steady_timer drain_timer_;
  bool waiting_for_size_ = false;
  bool drain_parked_ = false;  // the output watch waits for a pump to read its fd again
  uint64_t drain_seen_ = 0;
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
};

}  // namespace berth::streaming
