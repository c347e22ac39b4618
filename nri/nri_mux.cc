// See nri_mux.h: the multiplexer's 8-byte frame header, both ways.
#include "berth/nri_mux.h"

#include <algorithm>

#include "big_endian.h"

namespace berth::nri_mux {

std::string encode(uint32_t conn, std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + (bytes.size() / kSendPayload + 1) * kHeaderBytes);
  do {
    const size_t n = std::min(bytes.size(), kSendPayload);
    put_be32(out, conn);
    put_be32(out, static_cast<uint32_t>(n));
    out.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
  } while (!bytes.empty());
  return out;
}

Result<std::optional<Piece>> Demux::next() {
  if (!broken_.ok()) return broken_;
  if (buffer_.size() < kHeaderBytes) return std::optional<Piece>();
  const uint32_t conn = get_be32(buffer_.data());
  const uint32_t length = get_be32(buffer_.data() + 4);
  if (length > kMaxPayload) {
    broken_ = Status(Code::invalid_argument, "nri: a multiplexed frame of " + std::to_string(length) +
                                                 " bytes for connection " + std::to_string(conn) + " is over the " +
                                                 std::to_string(kMaxPayload) + " one holds");
    buffer_.clear();
    return broken_;
  }
  if (buffer_.size() < kHeaderBytes + length) return std::optional<Piece>();
  Piece p{conn, buffer_.substr(kHeaderBytes, length)};
  buffer_.erase(0, kHeaderBytes + length);
  return std::optional<Piece>(std::move(p));
}

}  // namespace berth::nri_mux
