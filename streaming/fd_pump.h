// Copying between a session's file descriptors (pipes, a pty master, a TCP socket) and its
// channels, asynchronously on the connection's strand, with backpressure both ways: a slow client
// stops the reads from the fd, a slow fd stops the reads from the client.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "berth/unique_fd.h"
#include "channel.h"

namespace berth::streaming {

using Descriptor = boost::asio::posix::stream_descriptor;

// Makes `fd` non-blocking and hands it to asio on `ex`; nothing for an invalid fd.
std::shared_ptr<Descriptor> wrap_fd(const boost::asio::any_io_executor& ex, UniqueFd fd);

// fd → client. Ends at EOF (or EIO, a pty whose last writer is gone) or on stop(), finishes the
// channel and runs on_done once everything read was handed on. Without a channel, or once the
// channel refuses bytes, what is read is dropped: a process never blocks on a full pipe.
class OutputPump : public std::enable_shared_from_this<OutputPump> {
 public:
  OutputPump(std::shared_ptr<Descriptor> fd, std::shared_ptr<Channel> channel, std::function<void()> on_done);
  void start();
  void stop();
  // `cb` runs each time a read of the fd starts (after one that a slow client held up, too).
  void on_read_started(std::function<void()> cb) { on_read_started_ = std::move(cb); }
  bool waiting_on_fd() const { return reading_ && !stopped_; }
  bool done() const { return done_; }
  uint64_t bytes() const { return bytes_; }

 private:
  void read_more();
  void maybe_done();

  std::shared_ptr<Descriptor> fd_;
  std::shared_ptr<Channel> channel_;
  std::function<void()> on_done_;
  std::function<void()> on_read_started_;
  bool reading_ = false, eof_ = false, stopped_ = false, done_ = false, discard_ = false;
  int in_flight_ = 0;
  uint64_t bytes_ = 0;
};

// client → fd. Writes what the channel delivers in order; when the client ends its side, closes
// the fd (a process's stdin) or shuts down its write half (a socket). A write error (the reader is
// gone) drops the rest but keeps consuming, so the client is never stalled by a dead fd.
class InputPump : public std::enable_shared_from_this<InputPump> {
 public:
  enum class OnEnd { close, shutdown_write };
  InputPump(std::shared_ptr<Descriptor> fd, OnEnd on_end, std::function<void()> on_done = {});
  void attach(Channel& channel);
  void push(std::string_view data, std::function<void()> consumed);
  void end();
  void stop();  // drops what is queued; on_done is not called
  bool done() const { return done_; }

 private:
  struct Chunk {
    std::string data;
    std::function<void()> consumed;
  };
  void write_more();
  void finish();

  std::shared_ptr<Descriptor> fd_;
  OnEnd on_end_;
  std::function<void()> on_done_;
  std::deque<Chunk> queue_;
  size_t writing_ = 0;  // chunks in the write under way
  bool ended_ = false, broken_ = false, done_ = false, stopped_ = false;
};

}  // namespace berth::streaming
