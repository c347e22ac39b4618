// One protocol packet (monitor_protocol.h) with its fds over a SOCK_SEQPACKET socket: the only
// place either side calls sendmsg/recvmsg for the protocol. Persists nothing.
#pragma once

#include <sys/types.h>

#include "berth/monitor_protocol.h"

namespace berth::monitor_protocol {

// Returns 0 or an errno. MSG_NOSIGNAL is always added to `flags` (e.g. MSG_DONTWAIT).
int send_packet(int sock, Type type, const void* fixed, size_t fixed_len, const char* text, size_t text_len,
                const int* fds = nullptr, int nfds = 0, int flags = 0);

// Receives one packet into buf (kMaxPacket bytes). Returns its size, 0 at end of stream, or
// -errno (-EMSGSIZE for a packet too big for the protocol). Received fds (close-on-exec) go to
// fds[0..*nfds); fds beyond kMaxFds are closed.
ssize_t recv_packet(int sock, void* buf, int* fds, int* nfds, int flags = 0);

}  // namespace berth::monitor_protocol
