// Exec and attach over SPDY: the client opens one stream per stdio channel, told apart by its
// streamType header (error, stdin, stdout, stderr, resize). The session starts once every
// expected stream is there — kubelet's count: the error stream, each requested stdio stream, and
// the resize stream for a tty from v3 on — or is dropped when they do not come in time.
#include <spdlog/spdlog.h>

#include "remotecommand.h"
#include "sessions.h"

namespace berth::streaming {

namespace {

class SpdyCommandHandler : public SpdyHandler, public std::enable_shared_from_this<SpdyCommandHandler> {
 public:
  SpdyCommandHandler(ServerContext& ctx, std::shared_ptr<SpdyConnection> conn, PendingRequest request, int version,
                     uint64_t registry_id)
      : ctx_(ctx),
        conn_(conn),
        strand_(conn->executor()),
        request_(std::move(request)),
        version_(version),
        registry_id_(registry_id),
        timer_(strand_) {
    bool in, out, err, tty;
    if (request_.kind == SessionKind::attach) {
      in = request_.attach.stdin, out = request_.attach.stdout, err = request_.attach.stderr, tty = request_.attach.tty;
    } else {
      in = request_.exec.stdin, out = request_.exec.stdout, err = request_.exec.stderr, tty = request_.exec.tty;
    }
    want_stdin_ = in;
    want_stdout_ = out;
    want_stderr_ = err && !tty;
    want_resize_ = tty && version_ >= 3;
    expected_ = 1 + int(want_stdin_) + int(want_stdout_) + int(want_stderr_) + int(want_resize_);
  }

  void begin() {
    timer_.expires_after(ctx_.config.stream_creation_timeout);
    timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->session_) return;
      spdlog::info("streaming: client did not open its streams in time ({} of {})", self->received_, self->expected_);
      if (auto c = self->conn_.lock()) c->close();
    });
  }

  bool on_stream(const std::shared_ptr<SpdyStream>& s) override {
    if (session_) return false;  // every stream a session needs is there already
    std::string type = s->header("streamtype");
    std::shared_ptr<Channel>* slot = nullptr;
    bool wanted = false;
    if (type == "error")
      slot = &ch_.error, wanted = true;
    else if (type == "stdin")
      slot = &ch_.stdin, wanted = want_stdin_;
    else if (type == "stdout")
      slot = &ch_.stdout, wanted = want_stdout_;
    else if (type == "stderr")
      slot = &ch_.stderr, wanted = want_stderr_;
    else if (type == "resize")
      slot = &ch_.resize, wanted = want_resize_;
    if (!slot || *slot) {
      spdlog::info("streaming: refusing {} stream '{}'", slot ? "a second" : "an unknown", type);
      return false;
    }
    *slot = s;
    if (wanted) ++received_;
    if (received_ == expected_) {
      // Start once the reply for this stream is queued: defer to the next turn of the strand.
      boost::asio::post(strand_, [self = shared_from_this()] { self->start_session(); });
    }
    return true;
  }

  void on_closed(bool lost) override {
    ctx_.registry.remove(registry_id_);
    boost::system::error_code ignored;
    timer_.cancel(ignored);
    closed_ = true;
    if (session_) session_->connection_closed(lost);
    session_.reset();
    ch_ = {};
  }

 private:
  void start_session() {
    if (closed_ || session_) return;
    boost::system::error_code ignored;
    timer_.cancel(ignored);
    ch_.status_json = version_ >= 4;
    session_ = std::make_shared<CommandSession>(ctx_, strand_, request_, ch_, conn_);
    session_->start();
  }

  ServerContext& ctx_;
  std::weak_ptr<SpdyConnection> conn_;
  boost::asio::any_io_executor strand_;
  PendingRequest request_;
  int version_;
  uint64_t registry_id_;
  boost::asio::steady_timer timer_;
  bool want_stdin_ = false, want_stdout_ = false, want_stderr_ = false, want_resize_ = false;
  int expected_ = 1, received_ = 0;
  bool closed_ = false;
  CommandChannels ch_;
  std::shared_ptr<CommandSession> session_;
};

}  // namespace

void serve_command_spdy(ServerContext& ctx, std::shared_ptr<SpdyConnection> conn, PendingRequest request, int version,
                        uint64_t registry_id) {
  auto handler = std::make_shared<SpdyCommandHandler>(ctx, conn, std::move(request), version, registry_id);
  handler->begin();
  conn->start(handler);
}

}  // namespace berth::streaming
