// The CNI result cache: one file per (network, sandbox id, interface) under <cache_dir>/results
// holding the exact network config, CNI_ARGS and capability arguments an ADD used, and its
// result once ADD finished. DEL and CHECK run from it, so they do not depend on the conf dir.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth::cni {

struct CacheEntry {
  std::string container_id, ifname, network_name;
  nlohmann::json config;  // the network config list as used
  std::string cni_args;
  nlohmann::json capability_args;  // everything offered; each plugin got its own subset
  std::string netns;               // the netns ADD ran in
  nlohmann::json result;           // the final ADD result; null while ADD has not finished
};

class ResultCache {
 public:
  explicit ResultCache(std::string cache_dir);  // entries in <cache_dir>/results

  // Atomic: temp file, rename; durable adds an fsync of the file and of the directory.
  Status save(const CacheEntry& entry, bool durable = true) const;
  // The entry of a sandbox on ifname, whatever its network; nullopt when there is none. A file
  // that fails its checksum or does not parse is an error naming the file; with `corrupt`, such
  // files are instead listed there ("path: why") and skipped.
  Result<std::optional<CacheEntry>> find(const std::string& container_id, const std::string& ifname,
                                         std::vector<std::string>* corrupt = nullptr) const;
  Status remove(const CacheEntry& entry) const;
  // Removes every file of this sandbox and interface (a corrupt entry, once DEL has run).
  Status remove_matching(const std::string& container_id, const std::string& ifname) const;

  // The sandbox ids of every readable entry (for releasing what no sandbox owns any more).
  std::vector<std::string> container_ids() const;

  std::string path_of(const CacheEntry& entry) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace berth::cni
