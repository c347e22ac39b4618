// sendmsg/recvmsg framing for the monitor protocol; see packet_io.h.
#include "packet_io.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

namespace berth::monitor_protocol {

int send_packet(int sock, Type type, const void* fixed, size_t fixed_len, const char* text, size_t text_len,
                const int* fds, int nfds, int flags) {
  unsigned char packet[kMaxPacket];
  size_t n = encode(type, fixed, fixed_len, text, text_len, packet);
  if (n == 0) return EMSGSIZE;
  iovec iov{packet, n};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  if (nfds > 0) {
    if (nfds > kMaxFds) return EINVAL;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  for (;;) {
    ssize_t r = sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
    if (r >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

ssize_t recv_packet(int sock, void* buf, int* fds, int* nfds, int flags) {
  *nfds = 0;
  iovec iov{buf, kMaxPacket};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  // Room for more fds than the protocol allows, so a misbehaving peer's extras are still closed.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t r;
  do {
    r = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return -errno;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int count = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < count; ++i) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (*nfds < kMaxFds)
        fds[(*nfds)++] = fd;
      else
        close(fd);
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    for (int i = 0; i < *nfds; ++i) close(fds[i]);
    *nfds = 0;
    return -EMSGSIZE;
  }
  return r;
}

}  // namespace berth::monitor_protocol
