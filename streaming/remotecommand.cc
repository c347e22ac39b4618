// The life of an exec/attach session over any transport: start through the backend on a worker,
// pump the fds, follow the process's end, drain, report the exit status, clean up.
#include "remotecommand.h"

#include <spdlog/spdlog.h>

namespace berth::streaming {

namespace asio = boost::asio;

CommandSession::CommandSession(ServerContext& ctx, asio::any_io_executor strand, PendingRequest request,
                               CommandChannels channels, std::weak_ptr<Connection> conn)
    : ctx_(ctx),
      strand_(std::move(strand)),
      req_(std::move(request)),
      verb_(req_.kind == SessionKind::attach ? SessionVerb::attach : SessionVerb::exec),
      ch_(std::move(channels)),
      conn_(std::move(conn)),
      drain_timer_(strand_) {}

void CommandSession::start() {
  if (ch_.resize) {
    std::weak_ptr<CommandSession> weak = shared_from_this();
    ch_.resize->on_receive(
        [weak](std::string_view data, std::function<void()> consumed) {
          if (auto self = weak.lock()) self->on_resize(data);
          consumed();
        },
        [] {});
  }
  bool tty = req_.kind == SessionKind::attach ? req_.attach.tty : req_.exec.tty;
  if (tty && ch_.resize && !pending_size_ && ctx_.config.tty_size_wait.count() > 0) {
    // Clients send their terminal size right away: let the terminal have it from the start.
    waiting_for_size_ = true;
    drain_timer_.expires_after(ctx_.config.tty_size_wait);
    drain_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && self->waiting_for_size_) self->launch();
    });
    return;
  }
  launch();
}

void CommandSession::launch() {
  waiting_for_size_ = false;
  if (state_ != State::starting) return;
  if (pending_size_) {
    req_.exec.tty_width = req_.attach.tty_width = pending_size_->width;
    req_.exec.tty_height = req_.attach.tty_height = pending_size_->height;
  }
  StreamingBackend* backend = &ctx_.backend;
  run_blocking(
      ctx_, ctx_.workers, strand_,
      [backend, req = req_]() -> Result<StreamIo> {
        return req.kind == SessionKind::attach ? backend->attach(req.attach) : backend->exec(req.exec);
      },
      [self = shared_from_this()](Result<StreamIo> io) { self->on_started(std::move(io)); });
}

void CommandSession::on_started(Result<StreamIo> result) {
  if (state_ == State::over) {  // the client left while the backend was starting the process
    if (result.ok()) {
      StreamIo io = std::move(result).value();
      cancel_ = std::move(io.cancel);
      outcome_ = std::move(io.outcome);
      resize_ = std::move(io.resize);
      release(true);
    }
    return;
  }
  if (!result.ok()) {
    spdlog::info("streaming: {} in {} failed to start: {}", verb_ == SessionVerb::exec ? "exec" : "attach",
                 verb_ == SessionVerb::exec ? req_.exec.container_id : req_.attach.container_id,
                 result.status().message());
    finish_with(start_failure_message(ch_.status_json, verb_, result.status()));
    return;
  }
  StreamIo io = std::move(result).value();
  state_ = State::running;
  resize_ = std::move(io.resize);
  outcome_ = std::move(io.outcome);
  cancel_ = std::move(io.cancel);
  if (ch_.stdin) {
    stdin_pump_ = std::make_shared<InputPump>(wrap_fd(strand_, std::move(io.stdin_fd)), InputPump::OnEnd::close);
    stdin_pump_->attach(*ch_.stdin);
  }
  io.stdin_fd.reset();
  std::weak_ptr<CommandSession> weak = shared_from_this();
  auto on_output_done = [weak] {
    if (auto self = weak.lock()) self->maybe_finish();
  };
  stdout_pump_ = std::make_shared<OutputPump>(wrap_fd(strand_, std::move(io.stdout_fd)), ch_.stdout, on_output_done);
  stderr_pump_ = std::make_shared<OutputPump>(wrap_fd(strand_, std::move(io.stderr_fd)), ch_.stderr, on_output_done);
  auto on_read_started = [weak] {
    if (auto self = weak.lock()) self->resume_drain();
  };
  stdout_pump_->on_read_started(on_read_started);
  stderr_pump_->on_read_started(on_read_started);
  done_fd_ = wrap_fd(strand_, std::move(io.done_fd));
  if (pending_size_ && resize_) resize_(pending_size_->width, pending_size_->height);
  stdout_pump_->start();
  stderr_pump_->start();
  if (done_fd_) {
    done_fd_->async_wait(Descriptor::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && self->state_ == State::running) self->on_exit();
    });
  }
  maybe_finish();
}

void CommandSession::on_resize(std::string_view data) {
  for (const auto& size : sizes_.feed(data)) {
    pending_size_ = size;
    if (resize_ && state_ == State::running) resize_(size.width, size.height);
  }
  if (waiting_for_size_ && pending_size_) {
    boost::system::error_code ignored;
    drain_timer_.cancel(ignored);
    launch();
  }
}

void CommandSession::on_exit() {
  state_ = State::exited;
  if (stdin_pump_) stdin_pump_->stop();
  maybe_finish();
  if (state_ != State::exited) return;
  drain_seen_ = stdout_pump_->bytes() + stderr_pump_->bytes();
  arm_drain();
}

void CommandSession::arm_drain() {
  drain_timer_.expires_after(ctx_.config.output_drain_quiet);
  drain_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && self->state_ == State::exited) self->check_drain();
  });
}

void CommandSession::check_drain() {
  // Output still arriving after the exit is forwarded; a pipe that stayed quiet for a whole
  // period (a background child holding it open) is given up.
  uint64_t total = stdout_pump_->bytes() + stderr_pump_->bytes();
  if (total == drain_seen_) {
    if (stdout_pump_->waiting_on_fd()) stdout_pump_->stop();
    if (stderr_pump_->waiting_on_fd()) stderr_pump_->stop();
  }
  drain_seen_ = total;
  if (state_ != State::exited) return;
  // With neither pump reading its fd (each held up by a slow client, or done), there is nothing
  // to time until one reads again: the watch resumes then, instead of waking for nothing.
  if (stdout_pump_->waiting_on_fd() || stderr_pump_->waiting_on_fd())
    arm_drain();
  else
    drain_parked_ = true;
}

void CommandSession::resume_drain() {
  if (!drain_parked_ || state_ != State::exited) return;
  drain_parked_ = false;
  drain_seen_ = stdout_pump_->bytes() + stderr_pump_->bytes();
  arm_drain();
}

bool CommandSession::outputs_done() const {
  return stdout_pump_ && stderr_pump_ && stdout_pump_->done() && stderr_pump_->done();
}

void CommandSession::maybe_finish() {
  if (!outputs_done()) return;
  if (state_ == State::running && !done_fd_) state_ = State::exited;  // no exit signal: EOF is the end
  if (state_ != State::exited) return;
  state_ = State::finishing;
  boost::system::error_code ignored;
  drain_timer_.cancel(ignored);
  auto outcome = outcome_;
  run_blocking(
      ctx_, ctx_.workers, strand_,
      [outcome]() -> Result<int> {
        if (!outcome) return 0;
        return outcome();
      },
      [self = shared_from_this()](Result<int> result) {
        if (self->state_ != State::finishing) return;
        auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - self->started_at_);
        spdlog::info("streaming: {} in {} ended: {} ({} ms)", self->verb_ == SessionVerb::exec ? "exec" : "attach",
                     self->verb_ == SessionVerb::exec ? self->req_.exec.container_id : self->req_.attach.container_id,
                     result.ok() ? "exit " + std::to_string(*result) : result.status().message(), ms.count());
        self->finish_with(exit_status_message(self->ch_.status_json, self->verb_, result));
      });
}

void CommandSession::finish_with(std::string message) {
  state_ = State::finishing;
  auto finish = [self = shared_from_this()](bool) {
    if (self->state_ == State::over) return;
    if (self->ch_.error) self->ch_.error->finish();
    if (self->ch_.stdout) self->ch_.stdout->finish();
    if (self->ch_.stderr) self->ch_.stderr->finish();
    self->state_ = State::over;
    self->release(false);
    if (auto conn = self->conn_.lock()) conn->close();
  };
  if (ch_.error && !message.empty())
    ch_.error->send(std::move(message), finish);
  else
    finish(true);
}

void CommandSession::connection_closed(bool lost) {
  if (state_ == State::over) return;
  State was = state_;
  state_ = State::over;
  bool cancel = lost && was == State::running;
  if (lost && (cancel || was == State::starting))
    spdlog::info("streaming: client of {} in {} went away, cancelling it",
                 verb_ == SessionVerb::exec ? "exec" : "attach",
                 verb_ == SessionVerb::exec ? req_.exec.container_id : req_.attach.container_id);
  release(cancel);
}

void CommandSession::release(bool cancel) {
  boost::system::error_code ignored;
  drain_timer_.cancel(ignored);
  if (stdin_pump_) stdin_pump_->stop();
  if (stdout_pump_) stdout_pump_->stop();
  if (stderr_pump_) stderr_pump_->stop();
  if (done_fd_) done_fd_->close(ignored);
  // The backend's callbacks may hold resources whose release blocks: drop them on a worker.
  post_work(ctx_, [cancel, c = std::move(cancel_), o = std::move(outcome_), r = std::move(resize_)] {
    if (cancel && c) c();
  });
  cancel_ = nullptr;
  outcome_ = nullptr;
  resize_ = nullptr;
}

}  // namespace berth::streaming
