// Result cache files. Format (version 1): {"version": 1, "sha256": hex of entry.dump(),
// "entry": {...}}; the checksum is over nlohmann-json's dump() of the entry, which is the same
// in any language that writes compact JSON with sorted keys. Written temp + rename (+ fsyncs when durable).
#include "result_cache.h"

#include "network_config.h"

#include <filesystem>

#include "berth/atomic_file.h"
#include "berth/checksummed_json.h"
#include "berth/file_text.h"
#include "berth/json_fields.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include <spdlog/spdlog.h>

namespace berth::cni {
namespace {

constexpr int kFormatVersion = 1;

nlohmann::json entry_to_json(const CacheEntry& e) {
  return {{"containerId", e.container_id},
          {"ifName", e.ifname},
          {"networkName", e.network_name},
          {"config", e.config},
          {"cniArgs", e.cni_args},
          {"capabilityArgs", e.capability_args},
          {"netns", e.netns},
          {"result", e.result}};
}

Result<CacheEntry> entry_from_json(const nlohmann::json& j) {
  JsonFields f(j);
  CacheEntry e;
  e.container_id = f.required_string("containerId");
  e.ifname = f.required_string("ifName");
  e.network_name = f.required_string("networkName");
  e.cni_args = f.required_string("cniArgs");
  e.netns = f.required_string("netns");
  const nlohmann::json* config = f.required_object("config");
  if (!f.ok()) return f.status();
  // DEL and CHECK walk the config's plugins: a config they would trip over is as bad as a
  // checksum mismatch.
  if (auto n = network_config_from_json(*config, ""); !n.ok()) return n.status().context("config");
  e.config = *config;
  // Kept as written: the plugins read them (capability arguments in runtimeConfig, the result as
  // prevResult), and result_ips checks the result where berth reads it.
  const nlohmann::json* caps = f.member("capabilityArgs");
  e.capability_args = caps ? *caps : nlohmann::json::object();
  const nlohmann::json* result = f.member("result");
  e.result = result ? *result : nlohmann::json();
  return e;
}

std::vector<std::string> matching_files(const std::string& dir, const std::string& container_id,
                                        const std::string& ifname) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  const std::string suffix = "-" + container_id + "-" + ifname;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(dir + "/" + n);
  }
  closedir(d);
  return out;
}

nlohmann::json read_json_file(const std::string& path) {
  return nlohmann::json::parse(read_text_file(path), nullptr, false);
}

// One cache file, checked: format version, checksum, fields.
Result<CacheEntry> read_entry(const std::string& path) {
  const nlohmann::json file = read_json_file(path);
  JsonFields f(file);
  const nlohmann::json* entry = f.member("entry");
  if (!f.ok() || !entry || !f.member("sha256"))
    return Status(Code::internal, "cni cache: " + path + ": not a cache file");
  if (f.required_integer<int>("version") != kFormatVersion || !f.ok())
    return Status(Code::internal, "cni cache: " + path + ": unknown format version");
  if (f.string("sha256") != sha256_hex(entry->dump()) || !f.ok())
    return Status(Code::internal, "cni cache: " + path + ": checksum mismatch");
  auto read = entry_from_json(*entry);
  if (!read.ok()) return read.status().context("cni cache: " + path);
  return read;
}

}  // namespace

ResultCache::ResultCache(std::string cache_dir) : dir_(std::move(cache_dir) + "/results") {}

std::string ResultCache::path_of(const CacheEntry& e) const {
  return dir_ + "/" + e.network_name + "-" + e.container_id + "-" + e.ifname;
}

Status ResultCache::save(const CacheEntry& entry, bool durable) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return Status(Code::internal, "cni cache: mkdir " + dir_ + ": " + ec.message());
  nlohmann::json body = entry_to_json(entry);
  nlohmann::json file = {{"version", kFormatVersion}, {"sha256", sha256_hex(body.dump())}, {"entry", body}};
  return write_file_atomically(path_of(entry), file.dump() + "\n", 0600, durable).context("cni cache");
}

Result<std::optional<CacheEntry>> ResultCache::find(const std::string& container_id, const std::string& ifname,
                                                    std::vector<std::string>* corrupt) const {
  DIR* d = opendir(dir_.c_str());
  if (!d) {
    if (errno == ENOENT) return std::optional<CacheEntry>();
    return errno_status(errno, "cni cache: open " + dir_);
  }
  closedir(d);
  std::vector<std::string> matches = matching_files(dir_, container_id, ifname);
  std::optional<CacheEntry> found;
  for (const auto& path : matches) {
    auto entry = read_entry(path);
    if (!entry.ok()) {
      if (!corrupt) return entry.status();
      corrupt->push_back(entry.status().message());
      continue;
    }
    if (entry->container_id != container_id || entry->ifname != ifname || found) continue;
    found = std::move(entry.value());
    if (!corrupt) break;
  }
  return found;
}

std::vector<std::string> ResultCache::container_ids() const {
  std::vector<std::string> out;
  DIR* d = opendir(dir_.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.' || std::string(e->d_name).find(".tmp") != std::string::npos) continue;
    const nlohmann::json file = read_json_file(dir_ + "/" + e->d_name);
    JsonFields f(file);
    const nlohmann::json* entry = f.object("entry");
    std::string id = entry ? f.nested(*entry, "entry").required_string("containerId") : "";
    if (entry && f.ok()) out.push_back(id);
  }
  closedir(d);
  return out;
}

// Removals are not fsync'd (StopPodSandbox would pay a journal commit for nothing): an entry a
// power cut brings back only costs, at the next start, a DEL of a gone sandbox without a netns,
// which the plugins answer by container id (host-local releases only that id's addresses).
Status ResultCache::remove(const CacheEntry& entry) const {
  const std::string path = path_of(entry);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "cni cache: remove " + path);
  return {};
}

Status ResultCache::remove_matching(const std::string& container_id, const std::string& ifname) const {
  for (const auto& path : matching_files(dir_, container_id, ifname)) {
    if (unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "cni cache: remove " + path);
  }
  return {};
}

}  // namespace berth::cni
