// connect_in_netns: the sockets are made by a thread that joined the pod's network namespace
// (setns affects only the calling thread; a socket keeps the namespace it was made in) and ends
// right after, so no other work ever runs in the pod's namespace; the connect itself runs on the
// caller's thread. A thread that cannot be started fails this one connect.
#include "berth/netns_connect.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>
#include <system_error>
#include <thread>

namespace berth {

namespace {

// Connects `fd` (a non-blocking TCP socket) to `addr`, waiting up to `timeout`.
Result<UniqueFd> connect_to(UniqueFd fd, const sockaddr* addr, socklen_t addr_len, const std::string& where,
                            std::chrono::milliseconds timeout) {
  if (::connect(fd.get(), addr, addr_len) != 0) {
    if (errno != EINPROGRESS)
      return errno_status(errno, where, errno == ECONNREFUSED ? Code::unavailable : Code::internal);
    pollfd p{fd.get(), POLLOUT, 0};
    int rc;
    do rc = ::poll(&p, 1, int(timeout.count()));
    while (rc < 0 && errno == EINTR);
    if (rc == 0) return Status(Code::deadline_exceeded, where + ": timed out", ETIMEDOUT);
    if (rc < 0) return errno_status(errno, where);
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return errno_status(err, where, err == ECONNREFUSED ? Code::unavailable : Code::internal);
  }
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// The two sockets a loopback connect may use, made in one namespace.
struct LoopbackSockets {
  Result<UniqueFd> v4 = internal_error("no socket");
  UniqueFd v6;  // invalid when the namespace has no IPv6
};

LoopbackSockets make_sockets() {
  LoopbackSockets s;
  UniqueFd v4(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  s.v4 = v4 ? Result<UniqueFd>(std::move(v4)) : Result<UniqueFd>(errno_status(errno, "socket"));
  s.v6 = UniqueFd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  return s;
}

// "localhost" as a port forward means it: 127.0.0.1, and [::1] for a listener bound only there.
Result<UniqueFd> connect_loopback(LoopbackSockets sockets, int32_t port, std::chrono::milliseconds timeout) {
  if (!sockets.v4.ok()) return sockets.v4.status();
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(uint16_t(port));
  v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto fd = connect_to(std::move(*sockets.v4), reinterpret_cast<sockaddr*>(&v4), sizeof v4,
                       "connect 127.0.0.1:" + std::to_string(port), timeout);
  if (fd.ok() || fd.status().code() != Code::unavailable || !sockets.v6) return fd;
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(uint16_t(port));
  v6.sin6_addr = in6addr_loopback;
  auto fd6 = connect_to(std::move(sockets.v6), reinterpret_cast<sockaddr*>(&v6), sizeof v6,
                        "connect [::1]:" + std::to_string(port), timeout);
  if (fd6.ok()) return fd6;
  return fd;  // the IPv4 refusal is the clearer error (and [::1] may not even exist)
}

}  // namespace

Result<UniqueFd> connect_in_netns(const std::string& netns_path, int32_t port, std::chrono::milliseconds timeout) {
  if (port < 1 || port > 65535) return invalid_argument("port " + std::to_string(port) + " is not 1-65535");
  if (netns_path.empty()) return connect_loopback(make_sockets(), port, timeout);
  UniqueFd ns(::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns) return errno_status(errno, "open netns " + netns_path, errno == ENOENT ? Code::not_found : Code::internal);
  LoopbackSockets sockets;
  Status entered = ok_status();
  std::thread helper;
  try {
    helper = std::thread([&] {
      if (::setns(ns.get(), CLONE_NEWNET) != 0) {
        entered = errno_status(errno, "setns " + netns_path);
        return;
      }
      sockets = make_sockets();
    });
  } catch (const std::system_error& e) {
    return Status(Code::resource_exhausted, "cannot start a thread to enter netns " + netns_path + ": " + e.what(),
                  e.code().value());
  }
  helper.join();
  if (!entered.ok()) return entered;
  auto fd = connect_loopback(std::move(sockets), port, timeout);
  if (!fd.ok()) return fd.status().context("in netns " + netns_path);
  return fd;
}

}  // namespace berth
