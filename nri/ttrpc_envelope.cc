// See ttrpc_wire.h: a unary call's Request and Response envelopes, over protobuf-lite.
#include <array>

#include "berth/ttrpc_wire.h"
#include "nri/ttrpc.pb.h"

namespace berth::ttrpc {

namespace {

// berth's codes in Code's order, as gRPC numbers them.
constexpr std::array<int32_t, 12> kGrpcCodes = {
    0,   // ok
    3,   // invalid_argument
    5,   // not_found
    6,   // already_exists
    9,   // failed_precondition
    4,   // deadline_exceeded
    8,   // resource_exhausted
    14,  // unavailable
    16,  // unauthenticated
    12,  // unimplemented
    13,  // internal
    1,   // cancelled
};

Status wrong_frame(const Frame& f, const char* want) {
  return Status(Code::invalid_argument, "ttrpc: stream " + std::to_string(f.stream_id) + ": a frame of type " +
                                            std::to_string(f.type) + " where a " + want + " belongs");
}

}  // namespace

int32_t grpc_code(Code code) {
  const auto i = static_cast<size_t>(code);
  return i < kGrpcCodes.size() ? kGrpcCodes[i] : 2;  // unknown
}

Code code_of_grpc(int32_t grpc) {
  for (size_t i = 0; i < kGrpcCodes.size(); ++i)
    if (kGrpcCodes[i] == grpc) return static_cast<Code>(i);
  return Code::internal;
}

Result<Call> decode_request(const Frame& f) {
  if (f.type != static_cast<uint8_t>(MessageType::request)) return wrong_frame(f, "request");
  if (f.oversized)
    return Status(Code::resource_exhausted, "ttrpc: stream " + std::to_string(f.stream_id) + ": a request of " +
                                                std::to_string(f.length) + " bytes is over the " +
                                                std::to_string(kMaxFrameData) + " a frame holds");
  ttrpc_wire::Request r;
  if (!r.ParseFromString(f.data))
    return Status(Code::invalid_argument,
                  "ttrpc: stream " + std::to_string(f.stream_id) + ": a request that does not parse");
  return Call{f.stream_id, r.service(), r.method(), r.payload(), r.timeout_nano()};
}

Result<std::string> encode_request(const Call& c) {
  ttrpc_wire::Request r;
  r.set_service(c.service);
  r.set_method(c.method);
  r.set_payload(c.payload);
  r.set_timeout_nano(c.timeout_ns);
  return encode_frame(c.stream_id, MessageType::request, 0, r.SerializeAsString());
}

Result<Answer> decode_response(const Frame& f) {
  if (f.type != static_cast<uint8_t>(MessageType::response)) return wrong_frame(f, "response");
  if (f.oversized)
    return Status(Code::resource_exhausted, "ttrpc: stream " + std::to_string(f.stream_id) + ": a response of " +
                                                std::to_string(f.length) + " bytes is over the " +
                                                std::to_string(kMaxFrameData) + " a frame holds");
  ttrpc_wire::Response r;
  if (!r.ParseFromString(f.data))
    return Status(Code::invalid_argument,
                  "ttrpc: stream " + std::to_string(f.stream_id) + ": a response that does not parse");
  Answer a{f.stream_id, Status(), r.payload()};
  // No status, or code 0, is success (ttrpc's client reads it so).
  if (r.has_status() && r.status().code() != 0) {
    a.status = Status(code_of_grpc(r.status().code()), r.status().message());
    if (a.status.ok()) a.status = Status(Code::internal, r.status().message());
    a.payload.clear();
  }
  return a;
}

Result<std::string> encode_response(const Answer& a) {
  ttrpc_wire::Response r;
  // Always a status, code 0 for success: ttrpc's oldest clients fail an answer without one.
  r.mutable_status()->set_code(grpc_code(a.status.code()));
  if (!a.status.ok())
    r.mutable_status()->set_message(a.status.message());
  else
    r.set_payload(a.payload);
  return encode_frame(a.stream_id, MessageType::response, 0, r.SerializeAsString());
}

}  // namespace berth::ttrpc
