// Splits the resize stream into JSON objects and reads Width/Height from each (keys matched
// case-insensitively, as Go's decoder does).
#include "terminal_size.h"

#include <nlohmann/json.hpp>
#include <strings.h>

namespace berth::streaming {

namespace {

bool parse(const std::string& text, TerminalSize& out) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  bool have_w = false, have_h = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_unsigned() || it.value().get<uint64_t>() > 0xffff) continue;
    auto v = uint16_t(it.value().get<uint64_t>());
    if (strcasecmp(it.key().c_str(), "width") == 0) {
      out.width = v;
      have_w = true;
    } else if (strcasecmp(it.key().c_str(), "height") == 0) {
      out.height = v;
      have_h = true;
    }
  }
  return have_w || have_h;
}

}  // namespace

std::vector<TerminalSize> TerminalSizeDecoder::feed(std::string_view bytes) {
  std::vector<TerminalSize> out;
  for (char c : bytes) {
    if (depth_ == 0) {
      if (c != '{') continue;  // whitespace between objects
      pending_.clear();
    }
    pending_.push_back(c);
    if (in_string_) {
      if (escaped_)
        escaped_ = false;
      else if (c == '\\')
        escaped_ = true;
      else if (c == '"')
        in_string_ = false;
    } else if (c == '"') {
      in_string_ = true;
    } else if (c == '{') {
      ++depth_;
    } else if (c == '}') {
      if (--depth_ == 0) {
        TerminalSize size;
        if (parse(pending_, size)) out.push_back(size);
        pending_.clear();
      }
    }
    if (pending_.size() > 4096) {
      pending_.clear();
      depth_ = 0;
      in_string_ = escaped_ = false;
    }
  }
  return out;
}

}  // namespace berth::streaming
