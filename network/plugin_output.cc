// What a failed CNI plugin said, read from its stdout and stderr (outside bytes: fuzzed by
// tests/fuzz/fuzz_cni_result.cc).
#include "plugin_output.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "berth/json_fields.h"

namespace berth::cni {

std::string trim(std::string s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// The CNI error object ({code, msg, details}) a failed plugin printed on stdout, exactly as it
// printed it (surrounding whitespace aside): callers and users see the plugin's own words, and
// tools that parse CNI errors can parse them from our message. Empty when stdout holds none.
std::string cni_error_json(const std::string& out) {
  std::string text = trim(out);
  nlohmann::json err = nlohmann::json::parse(text, nullptr, false);
  JsonFields f(err);
  if (f.member("code") || f.member("msg")) return text;
  return {};
}

// A failed plugin's words when it printed no CNI error: its output, then its stderr.
std::string plugin_output_text(const std::string& out, const std::string& err) {
  std::string text = trim(out);
  std::string e = trim(err);
  if (!e.empty()) text += (text.empty() ? "" : "; ") + e;
  return text.empty() ? "no output" : text;
}

}  // namespace berth::cni
