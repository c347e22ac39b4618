// The sd_notify datagram: see sd_notify.h for why it is written by hand.
#include "sd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "berth/unique_fd.h"

namespace berth {

namespace {

std::optional<std::string>& taken_socket() {
  static std::optional<std::string> path;
  return path;
}

}  // namespace

void take_notify_socket() {
  const char* env = std::getenv("NOTIFY_SOCKET");
  taken_socket() = env ? env : "";
  ::unsetenv("NOTIFY_SOCKET");
}

Status notify_service_manager(const std::string& state) {
  const char* env = taken_socket() ? taken_socket()->c_str() : std::getenv("NOTIFY_SOCKET");
  if (!env || !*env) return ok_status();
  std::string path = env;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return invalid_argument("NOTIFY_SOCKET: path too long");
  if (path[0] != '/' && path[0] != '@')
    return invalid_argument("NOTIFY_SOCKET: neither an absolute path nor an abstract name: " + path);
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';  // abstract namespace: the name is not NUL-terminated
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (path[0] == '@' ? 0 : 1));
  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return errno_status(errno, "notify " + path + ": socket");
  ssize_t n = ::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  if (n < 0) return errno_status(errno, "notify " + path + ": sendto");
  if (static_cast<size_t>(n) != state.size()) return Status(Code::internal, "notify " + path + ": short datagram");
  return ok_status();
}

std::string reloading_state() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned long long usec =
      static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL + static_cast<unsigned long long>(ts.tv_nsec) / 1000;
  return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec);
}

}  // namespace berth
