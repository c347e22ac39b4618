// read_exit_file: the daemon's reader of the file berth-monitor leaves (format in exit_record.h).
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "berth/monitor.h"
#include "exit_record.h"

namespace berth {

Result<ExitInfo> read_exit_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_status(errno, "read exit file " + path, errno == ENOENT ? Code::not_found : Code::internal);
  char text[16384];
  size_t n = 0;
  while (n < sizeof text) {
    ssize_t r = ::read(fd.get(), text + n, sizeof text - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno_status(errno, "read exit file " + path);
    if (r == 0) break;
    n += static_cast<size_t>(r);
  }
  ExitRecord rec;
  if (!parse_exit_record(text, n, &rec))
    return internal_error("read exit file " + path + ": not a version 1 exit record");
  return ExitInfo{rec.exit_code, rec.signal, rec.exited_at_ns, rec.reason};
}

}  // namespace berth
