// See frame_io.h.
#include "frame_io.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <spdlog/spdlog.h>

#include "pull_worker_protocol.h"

namespace berth::pull_protocol {

std::optional<std::string> read_frame(int fd, std::string& buffer) {
  for (;;) {
    auto f = take_frame(buffer);
    if (!f.ok()) {
      spdlog::error("{}", f.status().message());
      return std::nullopt;
    }
    if (*f) return std::move(**f);
    char chunk[65536];
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

bool send_frame(int fd, const std::string& payload) {
  std::string bytes = frame(payload);
  for (size_t off = 0; off < bytes.size();) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace berth::pull_protocol
