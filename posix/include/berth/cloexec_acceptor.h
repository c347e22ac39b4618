// TCP listeners and accepted connections of berthd's Boost.Asio servers (the streaming server, the
// metrics endpoint), close-on-exec from their making. Boost 1.74 calls socket(2) and accept(2)
// without SOCK_CLOEXEC, so a listener and every connection would reach each program berthd starts,
// and a pause holding a copy of a listener would keep a restarted berthd from binding its port.
// Header-only: the two servers link Boost, berth_posix does not.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <utility>

namespace berth {

// Opens `acceptor` for `protocol` on a socket made with SOCK_CLOEXEC (instead of acceptor.open).
inline boost::system::error_code open_cloexec(boost::asio::ip::tcp::acceptor& acceptor,
                                              const boost::asio::ip::tcp& protocol) {
  boost::system::error_code ec;
  int fd = ::socket(protocol.family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) return boost::system::error_code(errno, boost::system::system_category());
  acceptor.assign(protocol, fd, ec);
  if (ec) ::close(fd);
  if (!ec) acceptor.native_non_blocking(true, ec);
  return ec;
}

// Accepts every connection that arrives, each with accept4(SOCK_CLOEXEC), until the acceptor is
// closed: `make_socket()` gives the socket (on its executor) that adopts a connection and
// `serve(socket)` takes it. Waits on the acceptor rather than accepting through asio, whose accept
// has no flag.
template <class MakeSocket, class Serve>
void accept_cloexec(boost::asio::ip::tcp::acceptor& acceptor, MakeSocket make_socket, Serve serve) {
  acceptor.async_wait(boost::asio::ip::tcp::acceptor::wait_read,
                      [&acceptor, make_socket = std::move(make_socket),
                       serve = std::move(serve)](const boost::system::error_code& ec) mutable {
                        if (ec == boost::asio::error::operation_aborted || !acceptor.is_open()) return;
                        for (;;) {
                          int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
                          if (fd < 0 && errno == EINTR) continue;
                          if (fd < 0) break;  // none left, or out of descriptors: the next wake tries again
                          auto socket = make_socket();
                          boost::system::error_code assigned;
                          auto local = acceptor.local_endpoint(assigned);
                          if (!assigned) socket.assign(local.protocol(), fd, assigned);
                          if (assigned) {
                            ::close(fd);
                            continue;
                          }
                          serve(std::move(socket));
                        }
                        accept_cloexec(acceptor, std::move(make_socket), std::move(serve));
                      });
}

}  // namespace berth
