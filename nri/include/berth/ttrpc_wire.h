// ttrpc on the wire, as NRI plugins speak it (containerd/ttrpc): frames of a 10-byte header (data
// length and stream id, big-endian; message type; flags) and data of at most 4 MiB, and the
// Request/Response envelopes a unary call's frames carry. berth writes its own codec: ttrpc has no
// C or C++ implementation in Debian, and the framing is a few dozen lines over protobuf-lite.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "berth/status.h"

namespace berth::ttrpc {

constexpr size_t kFrameHeaderBytes = 10;
constexpr uint32_t kMaxFrameData = 4u << 20;

enum class MessageType : uint8_t { request = 1, response = 2, data = 3 };

struct Frame {
  uint32_t stream_id = 0;
  uint8_t type = 0;  // a MessageType, or what the peer sent
  uint8_t flags = 0;
  std::string data;
  // Longer than kMaxFrameData: its data was skipped, not kept; ttrpc answers such a request with
  // RESOURCE_EXHAUSTED on its stream.
  bool oversized = false;
  uint32_t length = 0;  // the data's length as the header gave it
};

// The header and data of one frame; data longer than kMaxFrameData is refused (RESOURCE_EXHAUSTED).
Result<std::string> encode_frame(uint32_t stream_id, MessageType type, uint8_t flags, std::string_view data);

// Takes whole frames off a byte stream, however it was cut.
class FrameReader {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame, or nullopt until more bytes are fed.
  std::optional<Frame> next();

 private:
  std::string buffer_;
  uint64_t skipping_ = 0;  // bytes of an oversized frame's data still to drop
  Frame skipped_;
};

// A unary call as a request frame carries it.
struct Call {
  uint32_t stream_id = 0;
  std::string service, method, payload;
  int64_t timeout_ns = 0;  // 0: none
};
Result<Call> decode_request(const Frame& frame);
Result<std::string> encode_request(const Call& call);

// A call's answer: OK with its payload, or the status it failed with.
struct Answer {
  uint32_t stream_id = 0;
  Status status;
  std::string payload;
};
Result<Answer> decode_response(const Frame& frame);
Result<std::string> encode_response(const Answer& answer);

// berth's codes as gRPC numbers them (ttrpc's status is google.rpc.Status), and back; an unknown
// number is Code::internal.
int32_t grpc_code(Code code);
Code code_of_grpc(int32_t grpc);

}  // namespace berth::ttrpc
