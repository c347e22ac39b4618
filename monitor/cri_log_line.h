// The CRI container log format kubelet reads: "<RFC3339Nano UTC> <stdout|stderr> <F|P> <content>\n".
// Cuts a stream's bytes into such lines; persists nothing itself (the caller writes each line).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace berth {

inline constexpr size_t kTimestampLength = 30;  // 2026-11-23T02:14:00.123456789Z
inline constexpr size_t kCriLogHeaderMax = kTimestampLength + sizeof(" stdout P ") + 1;

// Always nine fraction digits (kubelet accepts any RFC3339Nano; fixed width keeps lines sortable).
// Writes kTimestampLength chars (no terminator).
void format_rfc3339_nano(int64_t unix_ns, char* out);

// One log line into out; returns its length, or 0 when cap < len + kCriLogHeaderMax.
size_t format_cri_log_line(int64_t unix_ns, const char* stream, bool partial, const char* data, size_t len, char* out,
                           size_t cap);

// Splits one stream into CRI log records. Bytes are read straight into the splitter's buffer
// (space/commit), so each byte is copied once. A line longer than line_max goes out as P records of
// exactly line_max bytes and a final F record; "\n" and "\r\n" end a line and are not logged.
class CriLineSplitter {
 public:
  using Emit = void (*)(void* ctx, bool partial, const char* data, size_t len);

  // storage: at least storage_size(line_max) bytes, owned by the caller.
  static size_t storage_size(size_t line_max) { return line_max + 2; }
  CriLineSplitter(char* storage, size_t line_max, Emit emit, void* ctx)
      : buf_(storage), cap_(storage_size(line_max)), line_max_(line_max), emit_(emit), ctx_(ctx) {}

  // Where the next read() may put up to *room bytes (never 0).
  char* space(size_t* room) {
    *room = cap_ - len_;
    return buf_ + len_;
  }
  // n bytes were stored at space(): emits every record they complete.
  void commit(size_t n);
  // Copies data through space/commit (for callers that do not read into the buffer).
  void feed(const char* data, size_t n);
  // End of the stream: an unterminated rest is emitted as a P record. containerd's CRI logger does
  // the same (its readLine error path writes the last fragment with the partial tag), and kubelet
  // joins P records with whatever follows, so nothing is lost.
  void finish();
  size_t pending() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t line_max_;
  Emit emit_;
  void* ctx_;
  size_t len_ = 0;  // bytes held, none of them '\n'
};

}  // namespace berth
