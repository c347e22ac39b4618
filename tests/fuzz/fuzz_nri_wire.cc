// Fuzz target: what an NRI plugin sends berth (nri/: the multiplexer's frames, ttrpc's frames and
// envelopes). The first byte picks the layer and how the stream is cut: bit 0 set, a ttrpc stream
// alone; clear, a multiplexed one whose pieces of connections 1 and 2 go on to each connection's
// ttrpc reader. The rest of that byte is the size of the cuts. What decodes must encode and
// decode back the same; no frame kept is over the limit.
#include <map>
#include <string>

#include "berth/nri_mux.h"
#include "berth/ttrpc_wire.h"
#include "fuzz_support.h"

using namespace berth;

namespace {

void check_frame(const ttrpc::Frame& f) {
  FUZZ_CHECK(f.data.size() <= ttrpc::kMaxFrameData);
  if (f.oversized) FUZZ_CHECK(f.data.empty() && f.length > ttrpc::kMaxFrameData);
  if (auto call = ttrpc::decode_request(f); call.ok()) {
    auto again = ttrpc::encode_request(*call);
    FUZZ_CHECK(again.ok());
    ttrpc::FrameReader r;
    r.feed(*again);
    auto frame = r.next();
    FUZZ_CHECK(frame.has_value());
    auto back = ttrpc::decode_request(*frame);
    FUZZ_CHECK(back.ok() && back->stream_id == call->stream_id && back->service == call->service &&
               back->method == call->method && back->payload == call->payload && back->timeout_ns == call->timeout_ns);
  }
  if (auto answer = ttrpc::decode_response(f); answer.ok()) {
    auto again = ttrpc::encode_response(*answer);
    FUZZ_CHECK(again.ok());
    ttrpc::FrameReader r;
    r.feed(*again);
    auto frame = r.next();
    FUZZ_CHECK(frame.has_value());
    auto back = ttrpc::decode_response(*frame);
    FUZZ_CHECK(back.ok() && back->stream_id == answer->stream_id && back->status.code() == answer->status.code() &&
               back->status.message() == answer->status.message() && back->payload == answer->payload);
  }
}

void drain(ttrpc::FrameReader& r) {
  while (auto f = r.next()) check_frame(*f);
}

}  // namespace

BERTH_FUZZ_TARGET(nri_wire) {
  if (size == 0) return 0;
  const bool ttrpc_only = data[0] & 1;
  const size_t step = (data[0] >> 1) + 1;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (ttrpc_only) {
    ttrpc::FrameReader r;
    for (size_t off = 0; off < rest.size(); off += step) {
      r.feed(rest.substr(off, step));
      drain(r);
    }
    return 0;
  }
  nri_mux::Demux demux;
  std::map<uint32_t, ttrpc::FrameReader> conns;
  for (size_t off = 0; off < rest.size(); off += step) {
    demux.feed(rest.substr(off, step));
    for (;;) {
      auto piece = demux.next();
      if (!piece.ok()) {
        FUZZ_CHECK(!demux.next().ok());  // a broken stream stays broken
        return 0;
      }
      if (!*piece) break;
      FUZZ_CHECK((*piece)->payload.size() <= nri_mux::kMaxPayload);
      const uint32_t conn = (*piece)->conn;
      if (conn != nri_mux::kPluginServiceConn && conn != nri_mux::kRuntimeServiceConn) continue;  // dropped
      conns[conn].feed((*piece)->payload);
      drain(conns[conn]);
    }
  }
  return 0;
}
