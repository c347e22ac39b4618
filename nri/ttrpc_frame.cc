// See ttrpc_wire.h: the 10-byte frame header and the reader that cuts a byte stream into frames.
#include "berth/ttrpc_wire.h"

#include <algorithm>

#include "big_endian.h"

namespace berth::ttrpc {

Result<std::string> encode_frame(uint32_t stream_id, MessageType type, uint8_t flags, std::string_view data) {
  if (data.size() > kMaxFrameData)
    return Status(Code::resource_exhausted, "ttrpc: a message of " + std::to_string(data.size()) +
                                                " bytes is over the " + std::to_string(kMaxFrameData) +
                                                " a frame holds");
  std::string out;
  out.reserve(kFrameHeaderBytes + data.size());
  put_be32(out, static_cast<uint32_t>(data.size()));
  put_be32(out, stream_id);
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(flags));
  out.append(data);
  return out;
}

std::optional<Frame> FrameReader::next() {
  if (skipping_ > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(skipping_, buffer_.size()));
    buffer_.erase(0, n);
    skipping_ -= n;
    if (skipping_ > 0) return std::nullopt;
    return std::move(skipped_);
  }
  if (buffer_.size() < kFrameHeaderBytes) return std::nullopt;
  Frame f;
  f.length = get_be32(buffer_.data());
  f.stream_id = get_be32(buffer_.data() + 4);
  f.type = static_cast<uint8_t>(buffer_[8]);
  f.flags = static_cast<uint8_t>(buffer_[9]);
  if (f.length > kMaxFrameData) {
    // Dropped as it arrives, so a peer cannot make berth hold more than a frame's worth.
    buffer_.erase(0, kFrameHeaderBytes);
    f.oversized = true;
    skipping_ = f.length;
    skipped_ = std::move(f);
    return next();
  }
  if (buffer_.size() < kFrameHeaderBytes + f.length) return std::nullopt;
  f.data = buffer_.substr(kFrameHeaderBytes, f.length);
  buffer_.erase(0, kFrameHeaderBytes + f.length);
  return f;
}

}  // namespace berth::ttrpc
