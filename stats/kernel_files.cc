// Parsing of cgroupfs text files; kept apart so the v1 and v2 readers share one careful parser.
#include "kernel_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <string_view>

#include "berth/unique_fd.h"

namespace berth::kernel_files {

std::optional<std::string> read_text(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

static std::optional<uint64_t> parse_u64(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (s == "max") return std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> read_u64(const std::string& path) {
  auto text = read_text(path);
  if (!text) return std::nullopt;
  return parse_u64(*text);
}

std::map<std::string, uint64_t> read_key_values(const std::string& path) {
  std::map<std::string, uint64_t> out;
  auto text = read_text(path);
  if (!text) return out;
  std::string_view rest(*text);
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    if (auto v = parse_u64(line.substr(sp + 1))) out.emplace(std::string(line.substr(0, sp)), *v);
  }
  return out;
}

}  // namespace berth::kernel_files
