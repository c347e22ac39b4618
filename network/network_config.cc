// Parsing CNI network configuration files (nlohmann-json) and scanning the conf dir for the pod
// network. Persists nothing; the result cache keeps the config a pod was set up with.
#include "network_config.h"

#include <dirent.h>

#include <algorithm>
#include <sstream>

#include <spdlog/spdlog.h>

#include "berth/file_text.h"
#include "berth/json_fields.h"

namespace berth::cni {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status check_plugin(const nlohmann::json& p, size_t index) {
  JsonFields f(p, "plugins[" + std::to_string(index) + "]");
  const std::string type = f.required_string("type");
  f.object("capabilities");
  if (!f.ok()) return f.status();
  if (type.empty() || type.find('/') != std::string::npos || type == "." || type == "..")
    return invalid_argument("field 'plugins[" + std::to_string(index) + "].type': \"" + type +
                            "\" must be a plain file name");
  return {};
}

// Written as a bool or, as many installers do, as the string "true" / "false" (any case).
Result<bool> parse_disable_check(JsonFields& list) {
  const nlohmann::json* d = list.member("disableCheck");
  if (!d) return false;
  if (d->is_boolean()) return list.boolean("disableCheck", false);
  if (d->is_string()) {
    std::string v = list.string("disableCheck");
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(tolower(c)); });
    if (v == "true") return true;
    if (v == "false") return false;
  }
  return invalid_argument("\"disableCheck\" must be true or false, not " + d->dump());
}

}  // namespace

const nlohmann::json& NetworkConfigList::plugins() const {
  static const nlohmann::json none = nlohmann::json::array();
  const nlohmann::json* p = JsonFields(raw).array("plugins");
  return p ? *p : none;
}

std::vector<std::string> NetworkConfigList::plugin_types() const {
  std::vector<std::string> out;
  const nlohmann::json& list = plugins();
  for (size_t i = 0; i < list.size(); ++i) {
    JsonFields plugin(list[i], "plugins[" + std::to_string(i) + "]");
    out.push_back(plugin.string("type"));  // checked when the list was parsed
  }
  return out;
}

Result<NetworkConfigList> network_config_from_json(const nlohmann::json& doc, const std::string& file) {
  if (!doc.is_object()) return invalid_argument("not a JSON object");
  JsonFields top(doc);
  nlohmann::json list;
  if (top.member("plugins")) {
    list = doc;
  } else if (top.member("type")) {
    // A single plugin config: the list carries its name and version; the plugin keeps the rest.
    list = {{"plugins", nlohmann::json::array({doc})}};
    for (const char* key : {"cniVersion", "name"})
      if (const nlohmann::json* v = top.member(key)) list[key] = *v;
  } else {
    return invalid_argument("neither \"plugins\" nor \"type\" present");
  }
  JsonFields f(list);
  NetworkConfigList out;
  out.name = f.required_string("name");
  out.cni_version = f.required_string("cniVersion");
  const nlohmann::json* plugins = f.required_array("plugins");
  if (!f.ok()) return f.status();
  if (out.name.empty()) return invalid_argument("field 'name': must not be empty");
  if (plugins->empty()) return invalid_argument("field 'plugins': must not be empty");
  for (size_t i = 0; i < plugins->size(); ++i) {
    if (Status s = check_plugin((*plugins)[i], i); !s.ok()) return s;
  }
  auto disable_check = parse_disable_check(f);
  if (!disable_check.ok()) return disable_check.status();
  out.disable_check = *disable_check;
  // The network name names cache files: keep it to characters that are safe in a file name.
  for (char c : out.name) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return invalid_argument("\"name\" \"" + out.name + "\" may only hold letters, digits, '-', '_' and '.'");
  }
  out.raw = std::move(list);
  out.file = file;
  return out;
}

Result<NetworkConfigList> parse_network_config_file(const std::string& bytes, const std::string& file) {
  nlohmann::json doc = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return invalid_argument("not valid JSON");
  const bool has_plugins = JsonFields(doc).member("plugins") != nullptr;
  if (ends_with(file, ".conflist") && !has_plugins) return invalid_argument("a .conflist needs \"plugins\"");
  if (ends_with(file, ".conf") && has_plugins)
    return invalid_argument("a .conf holds one plugin; use .conflist for a list");
  return network_config_from_json(doc, file);
}

ConfDirScan scan_conf_dir(const std::string& dir) {
  ConfDirScan scan;
  DIR* d = opendir(dir.c_str());
  if (!d) {
    scan.error = "cni config dir " + dir + ": " + strerror(errno);
    return scan;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n[0] == '.') continue;
    if (ends_with(n, ".conflist") || ends_with(n, ".conf") || ends_with(n, ".json")) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string path = dir + "/" + n;
    auto text = read_file_bytes(path);
    if (!text.ok()) continue;  // removed while scanning
    auto parsed = parse_network_config_file(*text, path);
    // Only a boolean true disables a file; any other "disabled" leaves it in use.
    if (parsed.ok() && JsonFields(parsed->raw).boolean("disabled", false)) {
      spdlog::info("cni: skip {}: disabled", path);
      scan.skipped.push_back(path + ": disabled");
      continue;
    }
    if (!parsed.ok()) {
      spdlog::warn("cni: skip invalid network config {}: {}", path, parsed.status().message());
      scan.skipped.push_back(path + ": " + parsed.status().message());
      continue;
    }
    scan.network = std::move(parsed.value());
    return scan;
  }
  scan.error = names.empty() ? "no network config found in " + dir : "no valid network config in " + dir;
  return scan;
}

int compare_cni_versions(const std::string& a, const std::string& b) {
  auto parts = [](const std::string& v) {
    std::vector<long> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, '.')) out.push_back(std::strtol(item.c_str(), nullptr, 10));
    while (out.size() < 3) out.push_back(0);
    return out;
  };
  auto pa = parts(a), pb = parts(b);
  for (size_t i = 0; i < 3; ++i) {
    if (pa[i] != pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}

}  // namespace berth::cni
