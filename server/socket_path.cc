// gRPC unlinks whatever sits at a unix socket path before binding, so the liveness check must
// come first: connect() succeeding means another server owns the socket.
#include "socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "berth/unique_fd.h"
#include "state_lock.h"

namespace berth {

Status prepare_socket_path(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path)
    return invalid_argument("socket path " + path + " is longer than " + std::to_string(sizeof addr.sun_path - 1) +
                            " bytes");
  std::string dir = path.substr(0, path.rfind('/'));
  if (!dir.empty()) {
    if (Status s = make_dirs(dir, 0750); !s.ok()) return s.context("socket directory");
  }
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return errno_status(errno, "stat socket " + path);
  }
  if (!S_ISSOCK(st.st_mode))
    return failed_precondition("socket path " + path + " exists and is not a socket; not removing it");
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return errno_status(errno, "socket");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
    return failed_precondition("socket " + path + " is served by another running process (another berthd?)");
  if (errno != ECONNREFUSED) return errno_status(errno, "probe socket " + path);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove stale socket " + path);
  return {};
}

}  // namespace berth
