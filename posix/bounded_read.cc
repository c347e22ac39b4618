// See bounded_read.h. openat2 is called through syscall(): glibc 2.36 has no wrapper.
#include "berth/bounded_read.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "berth/unique_fd.h"

namespace berth {
namespace {

Result<std::string> read_opened(int fd, size_t max_size, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_status(errno, "stat " + what);
  if (!S_ISREG(st.st_mode)) return invalid_argument(what + " is not a regular file");
  if (static_cast<unsigned long long>(st.st_size) > max_size)
    return invalid_argument(what + " is larger than " + std::to_string(max_size) + " bytes");
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "read " + what);
    }
    text.append(buf, static_cast<size_t>(n));
    // The file may grow while read.
    if (text.size() > max_size)
      return invalid_argument(what + " is larger than " + std::to_string(max_size) + " bytes");
  }
  return text;
}

Status open_error(int err, const std::string& what) {
  if (err == ENOENT || err == ENOTDIR) return Status(Code::not_found, what + " does not exist");
  return errno_status(err, "open " + what, Code::invalid_argument);
}

}  // namespace

Result<std::string> read_regular_file(const std::string& path, size_t max_size, const std::string& what) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) return open_error(errno, what);
  return read_opened(fd.get(), max_size, what);
}

Result<std::string> read_regular_file_in_root(const std::string& root, const std::string& rel_path, size_t max_size,
                                              const std::string& what) {
  UniqueFd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return errno_status(errno, "open " + root);
  open_how how{};
  how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dir.get(), rel_path.c_str(), &how, sizeof how)));
  if (!fd) return open_error(errno, what);
  return read_opened(fd.get(), max_size, what);
}

}  // namespace berth
