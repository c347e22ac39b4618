// The error body a registry answers with (outside bytes: fuzzed by tests/fuzz/fuzz_manifest.cc).
#include "registry_error.h"

#include <nlohmann/json.hpp>

#include "berth/json_fields.h"

namespace berth {

std::string registry_error_text(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return "";
  JsonFields top(j);
  const nlohmann::json* errors = top.array("errors");
  if (!errors || errors->empty()) return "";
  JsonFields e((*errors)[0]);
  std::string code = e.string("code"), msg = e.string("message");
  // Only detail for the HTTP status the caller reports anyway: a body of another shape adds none.
  if (!e.ok()) return "";
  return code.empty() ? msg : code + ": " + msg;
}

}  // namespace berth
