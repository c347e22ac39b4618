// The capped write queue under a WebSocket connection; see ws_queued_stream.h.
#include "ws_queued_stream.h"

#include <boost/asio/error.hpp>
#include <utility>

namespace berth::streaming {

namespace {
constexpr size_t kChunk = 64 * 1024;
constexpr size_t kMaxWriteChunks = 16;  // one gathered write takes at most this many
}  // namespace

QueuedStream::QueuedStream(next_layer_type next, size_t cap) : q_(std::make_shared<Queue>(std::move(next), cap)) {}

QueuedStream::~QueuedStream() {
  if (!q_) return;
  q_->below = nullptr;
  q_->flushed.clear();
  error_code ignored;
  q_->next.socket().close(ignored);  // a write under way ends now and lets the queue go
}

void QueuedStream::when_below(size_t mark, std::function<void()> ready) {
  q_->below_mark = mark;
  q_->below = std::move(ready);
  q_->notify();
}

void QueuedStream::when_flushed(std::function<void(error_code)> done) {
  q_->flushed.push_back(std::move(done));
  q_->notify();
}

QueuedStream::error_code QueuedStream::Queue::reserve(size_t n) {
  if (failed) return failed;
  if (bytes + n > cap) {
    overflowed = true;
    fail(boost::asio::error::no_buffer_space);
  }
  return failed;
}

void QueuedStream::Queue::append(const char* p, size_t n) {
  bytes += n;
  while (n > 0) {
    if (chunks.size() <= writing || chunks.back().size() == kChunk) {
      chunks.emplace_back();
      chunks.back().reserve(kChunk);
    }
    auto& back = chunks.back();
    size_t k = std::min(n, kChunk - back.size());
    back.append(p, k);
    p += k;
    n -= k;
  }
}

void QueuedStream::Queue::fail(error_code ec) {
  if (failed) return;
  failed = ec;
  // Chunks in a write stay until it completes (with an error: the socket is closed here).
  chunks.resize(writing);
  if (writing == 0) front_off = 0;
  bytes = 0;
  error_code ignored;
  next.socket().close(ignored);
  notify();
}

void QueuedStream::Queue::notify() {
  // Callers are inside Beast's operations: waiters run later, never from here.
  auto ex = next.get_executor();
  if (below && (failed || bytes < below_mark)) boost::asio::post(ex, std::exchange(below, nullptr));
  if (!flushed.empty() && (failed || (bytes == 0 && writing == 0))) {
    for (auto& f : std::exchange(flushed, {})) boost::asio::post(ex, [f = std::move(f), ec = failed] { f(ec); });
  }
}

void QueuedStream::Queue::flush(const std::shared_ptr<Queue>& q) {
  if (q->writing > 0 || q->failed || q->chunks.empty()) return;
  std::vector<boost::asio::const_buffer> bufs;
  size_t off = q->front_off;
  for (const auto& c : q->chunks) {
    if (bufs.size() == kMaxWriteChunks) break;
    bufs.emplace_back(c.data() + off, c.size() - off);
    off = 0;
  }
  q->writing = bufs.size();
  q->next.async_write_some(bufs, [q](error_code ec, size_t n) {
    q->writing = 0;
    if (ec || q->failed) {
      q->chunks.clear();
      q->front_off = 0;
      q->fail(ec ? ec : q->failed);
      return;
    }
    q->bytes -= n;
    while (n > 0) {
      size_t left = q->chunks.front().size() - q->front_off;
      if (n < left) {
        q->front_off += n;
        break;
      }
      n -= left;
      q->chunks.pop_front();
      q->front_off = 0;
    }
    flush(q);
    q->notify();
  });
}

}  // namespace berth::streaming
