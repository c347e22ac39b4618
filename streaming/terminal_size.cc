// Splits the resize stream into JSON objects and reads Width/Height from each (keys matched
// case-insensitively, as Go's decoder does).
#include "terminal_size.h"

#include <nlohmann/json.hpp>
#include <strings.h>

#include "berth/json_fields.h"

namespace berth::streaming {

namespace {

bool parse(const std::string& text, TerminalSize& out) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return false;
  bool have_w = false, have_h = false;
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    bool width = strcasecmp(key.c_str(), "width") == 0;
    if (!width && strcasecmp(key.c_str(), "height") != 0) continue;
    // One reader per member: a member of another type or out of range is skipped, not the rest.
    JsonFields f(j);
    auto v = f.required_integer<uint16_t>(key.c_str());
    if (!f.ok()) continue;
    (width ? out.width : out.height) = v;
    (width ? have_w : have_h) = true;
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
