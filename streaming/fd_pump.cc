// The fd ↔ channel copy loops of exec, attach and port-forward sessions.
#include "fd_pump.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <boost/asio/write.hpp>
#include <vector>

namespace berth::streaming {

namespace asio = boost::asio;

namespace {
constexpr size_t kReadChunk = 64 * 1024;
constexpr int kMaxInFlight = 2;
}  // namespace

std::shared_ptr<Descriptor> wrap_fd(const asio::any_io_executor& ex, UniqueFd fd) {
  if (!fd.valid()) return nullptr;
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK);
  return std::make_shared<Descriptor>(ex, fd.release());
}

OutputPump::OutputPump(std::shared_ptr<Descriptor> fd, std::shared_ptr<Channel> channel, std::function<void()> on_done)
    : fd_(std::move(fd)), channel_(std::move(channel)), on_done_(std::move(on_done)) {
  discard_ = !channel_;
}

void OutputPump::start() { read_more(); }

void OutputPump::stop() {
  if (stopped_ || done_) return;
  stopped_ = true;
  eof_ = true;
  boost::system::error_code ignored;
  if (fd_ && reading_) fd_->cancel(ignored);
  maybe_done();
}

void OutputPump::read_more() {
  if (reading_ || eof_ || in_flight_ >= kMaxInFlight) return;
  if (!fd_ || !fd_->is_open()) {
    eof_ = true;
    maybe_done();
    return;
  }
  reading_ = true;
  if (on_read_started_) on_read_started_();
  auto buf = std::make_shared<std::string>(kReadChunk, '\0');
  fd_->async_read_some(asio::buffer(buf->data(), buf->size()),
                       [self = shared_from_this(), buf](const boost::system::error_code& ec, size_t n) {
                         self->reading_ = false;
                         if (ec || n == 0) {
                           self->eof_ = true;
                           self->maybe_done();
                           return;
                         }
                         self->bytes_ += n;
                         buf->resize(n);
                         if (!self->discard_ && !self->stopped_) {
                           ++self->in_flight_;
                           self->channel_->send(std::move(*buf), [self](bool ok) {
                             --self->in_flight_;
                             if (!ok) self->discard_ = true;
                             self->read_more();
                             self->maybe_done();
                           });
                         }
                         self->read_more();
                       });
}

void OutputPump::maybe_done() {
  if (done_ || !eof_ || reading_ || in_flight_ > 0) return;
  done_ = true;
  if (channel_ && !discard_) channel_->finish();
  if (auto cb = std::move(on_done_)) cb();
}

InputPump::InputPump(std::shared_ptr<Descriptor> fd, OnEnd on_end, std::function<void()> on_done)
    : fd_(std::move(fd)), on_end_(on_end), on_done_(std::move(on_done)) {
  broken_ = !fd_;
}

void InputPump::attach(Channel& channel) {
  std::weak_ptr<InputPump> weak = shared_from_this();
  channel.on_receive(
      [weak](std::string_view data, std::function<void()> consumed) {
        if (auto self = weak.lock())
          self->push(data, std::move(consumed));
        else
          consumed();
      },
      [weak] {
        if (auto self = weak.lock()) self->end();
      });
}

void InputPump::push(std::string_view data, std::function<void()> consumed) {
  if (broken_ || stopped_ || ended_ || data.empty()) {
    consumed();
    return;
  }
  queue_.push_back(Chunk{std::string(data), std::move(consumed)});
  write_more();
}

void InputPump::end() {
  if (ended_) return;
  ended_ = true;
  if (writing_ == 0 && queue_.empty()) finish();
}

void InputPump::stop() {
  stopped_ = true;
  on_done_ = nullptr;
  auto queue = std::move(queue_);
  queue_.clear();
  for (auto& c : queue) c.consumed();
}

void InputPump::write_more() {
  if (writing_ > 0 || queue_.empty() || stopped_) return;
  // One gathered write of what is queued (bounded), instead of a write per chunk.
  std::vector<asio::const_buffer> bufs;
  size_t bytes = 0;
  for (const auto& c : queue_) {
    if (bufs.size() == 64 || bytes >= (1u << 20)) break;
    bufs.push_back(asio::buffer(c.data));
    bytes += c.data.size();
  }
  writing_ = bufs.size();
  asio::async_write(*fd_, bufs, [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
    size_t count = self->writing_;
    self->writing_ = 0;
    if (self->stopped_) return;
    std::vector<std::function<void()>> consumed;
    for (size_t i = 0; i < count && !self->queue_.empty(); ++i) {
      consumed.push_back(std::move(self->queue_.front().consumed));
      self->queue_.pop_front();
    }
    if (ec) {
      self->broken_ = true;
      for (auto& c : self->queue_) consumed.push_back(std::move(c.consumed));
      self->queue_.clear();
    }
    for (auto& c : consumed) c();
    if (self->queue_.empty()) {
      if (self->ended_) self->finish();
    } else {
      self->write_more();
    }
  });
}

void InputPump::finish() {
  if (done_) return;
  done_ = true;
  if (fd_ && fd_->is_open()) {
    if (on_end_ == OnEnd::close) {
      boost::system::error_code ignored;
      fd_->close(ignored);
    } else {
      ::shutdown(fd_->native_handle(), SHUT_WR);
    }
  }
  if (auto cb = std::move(on_done_)) cb();
}

}  // namespace berth::streaming
