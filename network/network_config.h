// The pod network's config: a CNI network configuration list parsed from the conf dir (a single
// .conf is wrapped as a one-plugin list), and the conf-dir scan that picks the pod network.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth::cni {

struct NetworkConfigList {
  std::string cni_version;
  std::string name;
  bool disable_check = false;
  nlohmann::json raw;  // the list object exactly as used: {cniVersion, name, plugins: [...]}
  std::string file;    // where it came from ("" when rebuilt from the cache)

  const nlohmann::json& plugins() const;  // an empty array for a list not parsed
  std::vector<std::string> plugin_types() const;
};

// A list object (has "plugins") or a single plugin config (has "type"), validated.
Result<NetworkConfigList> network_config_from_json(const nlohmann::json& doc, const std::string& file);

// Parses one file's bytes; `file` decides the form: .conflist is a list, .conf a single plugin,
// .json whichever it holds.
Result<NetworkConfigList> parse_network_config_file(const std::string& bytes, const std::string& file);

struct ConfDirScan {
  std::optional<NetworkConfigList> network;  // the lexically first valid file
  std::vector<std::string> skipped;          // "file: why", one per invalid file before it
  std::string error;                         // why there is none (dir missing, empty ...)
};

// Reads *.conflist, *.conf, *.json of `dir` in lexical order; invalid files are logged and skipped.
ConfDirScan scan_conf_dir(const std::string& dir);

// -1, 0, 1 comparing dotted versions ("0.3.1" < "0.4.0" < "1.0.0"); missing parts count as 0.
int compare_cni_versions(const std::string& a, const std::string& b);

}  // namespace berth::cni
