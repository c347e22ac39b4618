// Fuzz target: the berthd <-> berth-monitor packets (berth/monitor_protocol.h): decode() and the
// fixed parts of every message type, and, for the same bytes sent as one SOCK_SEQPACKET packet,
// berthd's receiving end (recv_packet, receive_reply, exit_info_from). The first byte picks which.
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "../../monitor/monitor_connection.h"
#include "../../monitor/packet_io.h"
#include "berth/monitor_protocol.h"
#include "fuzz_support.h"

namespace proto = berth::monitor_protocol;
namespace conn = berth::monitor_connection;
using berth::UniqueFd;

namespace {

template <class T>
void fixed_part(const proto::Message& m) {
  T t;
  const char* text = nullptr;
  size_t text_len = 0;
  if (m.fixed(&t, &text, &text_len)) {
    FUZZ_CHECK(text_len == m.length - sizeof(T));
    if (text_len) FUZZ_CHECK(memcmp(text, m.payload + sizeof(T), text_len) == 0);
  } else {
    FUZZ_CHECK(m.length < sizeof(T));
  }
}

void decode(const std::string& packet) {
  proto::Message m{};
  auto e = proto::decode(packet.data(), packet.size(), &m);
  if (e != proto::DecodeError::none && e != proto::DecodeError::other_version) return;
  FUZZ_CHECK(m.length <= proto::kMaxPayload && m.length + sizeof(proto::Header) == packet.size());
  fixed_part<proto::HelloReply>(m);
  fixed_part<proto::Exited>(m);
  fixed_part<proto::AttachRequest>(m);
  fixed_part<proto::AttachReply>(m);
  fixed_part<proto::Resize>(m);
  fixed_part<proto::Spawned>(m);
  fixed_part<proto::Created>(m);
  fixed_part<proto::CreateFailed>(m);
  // What decodes encodes back to the same bytes.
  unsigned char out[proto::kMaxPacket];
  size_t n = proto::encode(m.type, nullptr, 0, reinterpret_cast<const char*>(m.payload), m.length, out, m.version);
  FUZZ_CHECK(n == packet.size() && memcmp(out, packet.data(), n) == 0);
}

void receive(const std::string& packet) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) abort();
  UniqueFd ours(sv[0]), monitor(sv[1]);
  if (send(monitor.get(), packet.data(), packet.size(), MSG_NOSIGNAL) != ssize_t(packet.size())) return;
  conn::Reply reply;
  auto s = conn::receive_reply(ours.get(), conn::Clock::now() + std::chrono::seconds(5), &reply, "fuzz");
  FUZZ_CHECK(s.code() != berth::Code::deadline_exceeded);
  FUZZ_CHECK(reply.fixed_len <= sizeof reply.fixed && reply.nfds == 0);
  if (s.ok()) {
    FUZZ_CHECK(reply.payload.size() + sizeof(proto::Header) == packet.size());
    berth::ExitInfo info;
    if (conn::exit_info_from(reply, &info))
      FUZZ_CHECK(info.reason.size() == reply.payload.size() - sizeof(proto::Exited));
  }
  // The monitor's side reads the same way: recv_packet into the protocol's buffer.
  if (send(ours.get(), packet.data(), packet.size(), MSG_NOSIGNAL) != ssize_t(packet.size())) return;
  unsigned char buf[proto::kMaxPacket];
  int fds[proto::kMaxFds];
  int nfds = 0;
  ssize_t r = proto::recv_packet(monitor.get(), buf, fds, &nfds, MSG_DONTWAIT);
  FUZZ_CHECK(nfds == 0);
  if (packet.size() > proto::kMaxPacket)
    FUZZ_CHECK(r == -EMSGSIZE);
  else
    FUZZ_CHECK(r == ssize_t(packet.size()) && memcmp(buf, packet.data(), packet.size()) == 0);
}

}  // namespace

BERTH_FUZZ_TARGET(monitor_protocol) {
  berth::fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string packet(in.rest());
  // Most inputs get a valid header in front, so the fuzzer spends its time on the payloads.
  if (mode & 2) {
    proto::Header h{proto::kMagic, mode & 4 ? uint16_t(2) : proto::kVersion, uint16_t(mode >> 3),
                    uint32_t(packet.size())};
    packet.insert(0, reinterpret_cast<const char*>(&h), sizeof h);
  }
  if (mode & 1)
    receive(packet);
  else
    decode(packet);
  return 0;
}
