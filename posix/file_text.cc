// See file_text.h.
#include "berth/file_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "berth/unique_fd.h"

namespace berth {

Result<std::string> read_file_bytes(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) return errno_status(errno, "open " + path, errno == ENOENT ? Code::not_found : Code::internal);
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, "read " + path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

std::string read_text_file(const std::string& path) {
  auto bytes = read_file_bytes(path);
  return bytes.ok() ? std::move(bytes).value() : std::string();
}

}  // namespace berth
