// Asking a runtime binary what it can do (see runtime_features.h): `features`, else `--version`.
#include "berth/runtime_features.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "berth/command.h"
#include "berth/json_fields.h"

namespace berth {

namespace {

constexpr std::chrono::seconds kAskTimeout{5};

}  // namespace

bool RuntimeFeatures::has_mount_option(const std::string& option) const {
  return std::find(mount_options.begin(), mount_options.end(), option) != mount_options.end();
}

bool RuntimeFeatures::joins_user_namespace() const {
  return !namespaces || std::find(namespaces->begin(), namespaces->end(), "user") != namespaces->end();
}

RuntimeFeatures parse_runtime_features(const std::string& json_text) {
  RuntimeFeatures f;
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  JsonFields fields(j);
  auto options = fields.strings("mountOptions");
  std::optional<std::vector<std::string>> namespaces;
  if (const nlohmann::json* linux = fields.object("linux")) {
    JsonFields l = fields.nested(*linux, "linux");
    if (l.has("namespaces")) namespaces = l.strings("namespaces");
  }
  if (!fields.ok()) return f;
  f.responds = f.answered = true;
  f.mount_options = std::move(options);
  f.namespaces = std::move(namespaces);
  return f;
}

std::string runtime_identity(const std::string& version_text, const std::string& binary) {
  const std::string first = version_text.substr(0, version_text.find('\n'));
  const std::string base = binary.substr(binary.rfind('/') + 1);
  if (first.rfind("runc version ", 0) == 0) return "runc";
  if (first.rfind("crun version ", 0) != 0 || base == "krun") return "";
  for (const char* flavour : {"+WASM", "+LIBKRUN", "+KRUN"})
    if (version_text.find(flavour) != std::string::npos) return "";
  return "crun";
}

RuntimeFeatures ask_runtime_features(const std::string& binary) {
  RuntimeFeatures f;
  auto r = run_command({.argv = {binary, "features"}, .timeout = kAskTimeout, .output_limit = 1 << 20});
  if (r.ok() && r->success()) f = parse_runtime_features(r->out);
  auto version = run_command({.argv = {binary, "--version"}, .timeout = kAskTimeout, .output_limit = 1 << 16});
  const bool versioned = version.ok() && version->success();
  f.responds = f.answered || versioned;
  if (versioned) f.identity = runtime_identity(version->out, binary);
  return f;
}

}  // namespace berth
