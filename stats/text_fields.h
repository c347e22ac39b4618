// Line and field splitting and strict number parsing for the kernel's text files, header-only so
// the parsers build alone (the fuzz harnesses compile them without the rest of berth_stats).
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace berth::text_fields {

// Takes the next line off `rest` (without its '\n').
inline std::string_view next_line(std::string_view& rest) {
  size_t eol = rest.find('\n');
  std::string_view line = rest.substr(0, eol);
  rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
  return line;
}

// Takes the next field off `rest`, fields being separated by spaces or tabs; empty at the end.
inline std::string_view next_field(std::string_view& rest) {
  size_t start = rest.find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  size_t end = rest.find_first_of(" \t");
  std::string_view field = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  return field;
}

// Decimal digits only, the whole of `s`, no overflow: "-1", "+1", " 1" and "1x" are not numbers.
inline std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "MAJ:MIN", both decimal: the device key the kernel puts first on io.stat and blkio lines.
inline bool is_device(std::string_view s) {
  size_t colon = s.find(':');
  return colon != std::string_view::npos && parse_u64(s.substr(0, colon)) && parse_u64(s.substr(colon + 1));
}

// Counters summed over devices stop at the top rather than wrap to small numbers.
inline uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace berth::text_fields
