// Fuzz target: the berth-pull pipe protocol (image/pull_worker_protocol.h). berthd reads a
// helper's frames and replies as outside bytes (a helper a hostile archive took over); the helper
// reads berthd's hello and requests. The first byte picks what is read: 0 a stream of frames with
// replies in them, cut in pieces of a size the byte also gives; 1 a request; 2 a hello. Whatever
// decodes must encode back to the same thing.
#include "../../image/pull_worker_protocol.h"
#include "fuzz_support.h"

using namespace berth;
namespace proto = berth::pull_protocol;

namespace {

void replies(const std::string& stream, size_t step) {
  std::string buffer;
  for (size_t off = 0; off < stream.size(); off += step) {
    buffer.append(stream, off, step);
    for (;;) {
      auto f = proto::take_frame(buffer);
      if (!f.ok()) {
        FUZZ_CHECK(f.status().code() == Code::internal);
        return;
      }
      if (!*f) break;
      FUZZ_CHECK((*f)->size() <= proto::kMaxFrameBytes);
      auto r = proto::decode_reply(**f);
      if (!r.ok()) {
        FUZZ_CHECK(r.status().code() == Code::internal);
        continue;
      }
      if (!r->status.ok()) FUZZ_CHECK(!r->status.message().empty());
      auto again = proto::decode_reply(proto::encode_reply(*r));
      FUZZ_CHECK(again.ok() && again->status.code() == r->status.code() && again->registry_bytes == r->registry_bytes);
    }
  }
}

void request(const std::string& payload) {
  auto r = proto::decode_request(payload);
  if (!r.ok()) return;
  auto again = proto::decode_request(proto::encode_request(*r));
  FUZZ_CHECK(again.ok() && again->op == r->op && again->size == r->size && again->reference == r->reference &&
             again->credentials.password == r->credentials.password);
}

void hello(const std::string& payload) {
  auto h = proto::decode_hello(payload);
  if (!h.ok()) return;
  auto again = proto::decode_hello(proto::encode_hello(*h));
  FUZZ_CHECK(again.ok() && again->registry.hosts.size() == h->registry.hosts.size());
}

}  // namespace

BERTH_FUZZ_TARGET(pull_worker) {
  fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string rest(in.rest());
  switch (mode % 3) {
    case 0: replies(rest, size_t{mode} / 3 + 1); break;
    case 1: request(rest); break;
    default: hello(rest);
  }
  return 0;
}
