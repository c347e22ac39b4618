// SpdyClient: a blocking SPDY/3.1 client connection for the tests — upgrade, streams, data with
// flow control (or, like Go's spdystream, without), a reader thread that answers PINGs and
// records what the server did (window violations, GOAWAY, resets).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "berth/status.h"
#include "berth/unique_fd.h"
#include "spdy_codec.h"

namespace berth::test {

class SpdyClient {
 public:
  struct Options {
    bool flow_control = true;             // send SETTINGS and WINDOW_UPDATEs, honour the server's windows
    int64_t initial_window = 128 * 1024;  // the stream window announced to the server
  };
  static Result<std::unique_ptr<SpdyClient>> dial(const std::string& url, const std::vector<std::string>& protocols,
                                                  Options options, std::chrono::milliseconds timeout);
  ~SpdyClient();

  const std::string& protocol() const { return protocol_; }
  uint32_t open(const spdyc::Headers& headers, bool fin = false);
  Status write(uint32_t id, std::string_view bytes, std::chrono::milliseconds timeout);
  Status finish(uint32_t id);
  Status send_raw(std::string_view bytes);
  Status ping(uint32_t id);

  // Up to `max` bytes from stream `id`; "" once it ended with nothing left; DEADLINE_EXCEEDED.
  Result<std::string> read(uint32_t id, size_t max, std::chrono::milliseconds timeout);
  // Waits until one of `ids` has bytes or has ended: its id and bytes ("" when it ended).
  Result<std::pair<uint32_t, std::string>> read_any(const std::vector<uint32_t>& ids,
                                                    std::chrono::milliseconds timeout);
  bool wait_closed(std::chrono::milliseconds timeout);  // the server closed the TCP connection
  bool closed();
  bool reset(uint32_t id);
  bool goaway();
  uint64_t window_violations();
  uint32_t pings_answered();
  void abort();  // vanish without a goodbye

 private:
  struct Stream {
    std::string in;
    bool ended = false, reset = false, replied = false;
    int64_t send_window = 65536;
    int64_t recv_window = 0;
    int64_t unacked = 0;
  };
  SpdyClient() = default;
  void reader();
  std::string take(uint32_t id, size_t max, std::unique_lock<std::mutex>& lock);
  void handle(spdyc::Frame f);
  Status send_locked_free(const std::string& bytes);

  Options opts_;
  UniqueFd fd_;
  std::string protocol_, rbuf_;
  std::thread thread_;
  std::mutex write_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  spdyc::Deflater deflate_;
  spdyc::Inflater inflate_;
  std::map<uint32_t, Stream> streams_;
  uint32_t next_id_ = 1;
  int64_t peer_initial_window_ = 65536;
  int64_t session_send_window_ = 65536;
  int64_t session_recv_window_ = 0, session_unacked_ = 0;
  bool closed_ = false, goaway_ = false;
  uint64_t violations_ = 0;
  uint32_t pings_answered_ = 0;
};

}  // namespace berth::test
