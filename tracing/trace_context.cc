// traceparent parsing and formatting (see trace_context.h); ids from the kernel's random source.
#include "berth/trace_context.h"

#include <sys/random.h>

#include <algorithm>

namespace berth {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is refused, as the specification says
}

template <size_t N>
bool read_hex(std::string_view text, std::array<uint8_t, N>& out) {
  if (text.size() != 2 * N) return false;
  for (size_t i = 0; i < N; ++i) {
    int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return std::any_of(out.begin(), out.end(), [](uint8_t b) { return b != 0; });
}

}  // namespace

std::optional<TraceContext> parse_traceparent(std::string_view text) {
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
  if (text.size() < 55 || text[2] != '-' || text[35] != '-' || text[52] != '-') return std::nullopt;
  std::array<uint8_t, 1> version{}, flags{};
  if (text.substr(0, 2) == "00") {
    version[0] = 0;
  } else if (!read_hex(text.substr(0, 2), version) || version[0] == 0xff) {
    return std::nullopt;
  }
  if (version[0] == 0 && text.size() != 55) return std::nullopt;
  if (version[0] != 0 && text.size() > 55 && text[55] != '-') return std::nullopt;
  TraceContext c;
  if (!read_hex(text.substr(3, 32), c.trace_id) || !read_hex(text.substr(36, 16), c.span_id)) return std::nullopt;
  // Flags may be 00: read_hex refuses all-zero, so they are read digit by digit.
  int hi = hex_digit(text[53]), lo = hex_digit(text[54]);
  if (hi < 0 || lo < 0) return std::nullopt;
  flags[0] = static_cast<uint8_t>(hi << 4 | lo);
  c.flags = flags[0];
  return c;
}

std::string hex(const uint8_t* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

std::string format_traceparent(const TraceContext& c) {
  return "00-" + hex(c.trace_id.data(), c.trace_id.size()) + "-" + hex(c.span_id.data(), c.span_id.size()) + "-" +
         hex(&c.flags, 1);
}

void random_id(uint8_t* out, size_t n) {
  do {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::getrandom(out + got, n - got, 0);
      if (r > 0) got += static_cast<size_t>(r);
    }
  } while (std::all_of(out, out + n, [](uint8_t b) { return b == 0; }));
}

}  // namespace berth
