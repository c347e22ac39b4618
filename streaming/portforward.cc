// One forwarded TCP connection: connect through the backend on a worker, then pump both ways.
#include "portforward.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

namespace berth::streaming {

std::string forward_error_message(int32_t port, const std::string& sandbox_id, const std::string& why) {
  return "error forwarding port " + std::to_string(port) + " to pod " + sandbox_id + ", uid : " + why;
}

ForwardPair::ForwardPair(ServerContext& ctx, boost::asio::any_io_executor strand, std::string sandbox_id, int32_t port,
                         std::shared_ptr<Channel> data, std::shared_ptr<Channel> error, bool spdy,
                         std::function<void()> on_done)
    : ctx_(ctx),
      strand_(std::move(strand)),
      sandbox_id_(std::move(sandbox_id)),
      port_(port),
      data_(std::move(data)),
      error_(std::move(error)),
      spdy_(spdy),
      on_done_(std::move(on_done)) {}

void ForwardPair::start() {
  StreamingBackend* backend = &ctx_.backend;
  run_blocking(
      ctx_, ctx_.connectors, strand_,
      [backend, sandbox = sandbox_id_, port = port_] { return backend->connect_port(sandbox, port); },
      [self = shared_from_this()](Result<UniqueFd> fd) { self->on_connected(std::move(fd)); });
}

void ForwardPair::on_connected(Result<UniqueFd> fd) {
  if (stopped_) return;
  if (!fd.ok()) {
    fail(fd.status().message());
    return;
  }
  socket_ = wrap_fd(strand_, std::move(fd).value());
  std::weak_ptr<ForwardPair> weak = shared_from_this();
  auto check = [weak] {
    if (auto self = weak.lock()) self->maybe_done();
  };
  out_ = std::make_shared<OutputPump>(socket_, data_, check);
  in_ = std::make_shared<InputPump>(socket_, InputPump::OnEnd::shutdown_write, check);
  in_->attach(*data_);
  out_->start();
}

void ForwardPair::fail(const std::string& why) {
  std::string message = forward_error_message(port_, sandbox_id_, why);
  spdlog::info("streaming: {}", message);
  if (spdy_) {
    nlohmann::json j = {{"closeConnection", true}, {"message", message}};
    message = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  // Whatever the client sends on the data channel is dropped.
  data_->on_receive([](std::string_view, std::function<void()> consumed) { consumed(); }, [] {});
  error_->send(std::move(message), [self = shared_from_this()](bool) {
    self->data_->finish();
    self->error_->finish();
    self->done_ = true;
    if (auto cb = std::move(self->on_done_)) cb();
  });
}

void ForwardPair::maybe_done() {
  if (done_ || !out_ || !in_ || !out_->done()) return;
  if (!error_finished_) {  // the pod closed its side: the client's reader of the error stream may end
    error_finished_ = true;
    error_->finish();
  }
  if (spdy_ && !in_->done()) return;  // the client's half may still be sending
  done_ = true;
  in_->stop();
  boost::system::error_code ignored;
  socket_->close(ignored);
  if (auto cb = std::move(on_done_)) cb();
}

void ForwardPair::stop() {
  if (stopped_) return;
  stopped_ = true;
  on_done_ = nullptr;
  if (in_) in_->stop();
  if (out_) out_->stop();
  boost::system::error_code ignored;
  if (socket_) socket_->close(ignored);
}

}  // namespace berth::streaming
