// The checksum is sha256 (nettle) of nlohmann::json::dump() of the object without its
// "checksum" key: dump() writes keys sorted and without whitespace, which makes it canonical.
#include "berth/sandbox_checkpoint.h"

#include <dirent.h>
#include <nettle/sha2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "berth/atomic_file.h"

namespace berth {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;

std::string sha256_hex(const std::string& data) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof md, md);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : md) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

json to_json(const SandboxCheckpoint& c) {
  json ports = json::array();
  for (const auto& p : c.port_mappings)
    ports.push_back({{"protocol", p.protocol}, {"container_port", p.container_port}, {"host_port", p.host_port}, {"host_ip", p.host_ip}});
  return {{"version", kVersion},
          {"id", c.id},
          {"metadata", {{"name", c.name}, {"namespace", c.namespace_}, {"uid", c.uid}, {"attempt", c.attempt}}},
          {"netns_path", c.netns_path},
          {"host_network", c.host_network},
          {"namespace_modes", {{"network", c.network_mode}, {"pid", c.pid_mode}, {"ipc", c.ipc_mode}}},
          {"cgroup_parent", c.cgroup_parent},
          {"runtime_handler", c.runtime_handler},
          {"hostname", c.hostname},
          {"log_directory", c.log_directory},
          {"port_mappings", ports},
          {"labels", c.labels},
          {"annotations", c.annotations},
          {"created_at", c.created_at}};
}

Result<SandboxCheckpoint> from_json(const json& j) {
  try {
    SandboxCheckpoint c;
    c.id = j.at("id").get<std::string>();
    const json& m = j.at("metadata");
    c.name = m.at("name").get<std::string>();
    c.namespace_ = m.at("namespace").get<std::string>();
    c.uid = m.at("uid").get<std::string>();
    c.attempt = m.at("attempt").get<uint32_t>();
    c.netns_path = j.at("netns_path").get<std::string>();
    c.host_network = j.at("host_network").get<bool>();
    c.network_mode = j.at("namespace_modes").at("network").get<int>();
    c.pid_mode = j.at("namespace_modes").at("pid").get<int>();
    c.ipc_mode = j.at("namespace_modes").at("ipc").get<int>();
    c.cgroup_parent = j.at("cgroup_parent").get<std::string>();
    c.runtime_handler = j.at("runtime_handler").get<std::string>();
    c.hostname = j.at("hostname").get<std::string>();
    c.log_directory = j.at("log_directory").get<std::string>();
    for (const auto& p : j.at("port_mappings"))
      c.port_mappings.push_back({p.at("protocol").get<std::string>(), p.at("container_port").get<int32_t>(),
                                 p.at("host_port").get<int32_t>(), p.at("host_ip").get<std::string>()});
    c.labels = j.at("labels").get<std::map<std::string, std::string>>();
    c.annotations = j.at("annotations").get<std::map<std::string, std::string>>();
    c.created_at = j.at("created_at").get<int64_t>();
    return c;
  } catch (const json::exception& e) {
    return invalid_argument(std::string("malformed: ") + e.what());
  }
}

}  // namespace

std::string checkpoint_path(const std::string& dir, const std::string& id) { return dir + "/" + id + ".json"; }

Status write_checkpoint(const std::string& dir, const SandboxCheckpoint& cp) {
  json j = to_json(cp);
  j["checksum"] = "sha256:" + sha256_hex(j.dump());
  return write_file_atomically(checkpoint_path(dir, cp.id), j.dump(2) + "\n").context("write checkpoint of " + cp.id);
}

Result<SandboxCheckpoint> read_checkpoint(const std::string& path) {
  std::ifstream in(path);
  if (!in) return errno_status(errno, "read checkpoint " + path, Code::not_found);
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (!j.is_object()) return invalid_argument("checkpoint " + path + ": not JSON");
  if (!j.contains("version") || j["version"] != kVersion)
    return invalid_argument("checkpoint " + path + ": unsupported version " + (j.contains("version") ? j["version"].dump() : "(none)"));
  if (!j.contains("checksum") || !j["checksum"].is_string()) return invalid_argument("checkpoint " + path + ": no checksum");
  std::string stored = j["checksum"];
  j.erase("checksum");
  std::string computed = "sha256:" + sha256_hex(j.dump());
  if (stored != computed) return invalid_argument("checkpoint " + path + ": checksum mismatch (stored " + stored + ", computed " + computed + ")");
  auto c = from_json(j);
  if (!c.ok()) return c.status().context("checkpoint " + path);
  return c;
}

Status remove_checkpoint(const std::string& dir, const std::string& id) {
  if (::unlink(checkpoint_path(dir, id).c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove checkpoint of " + id);
  return ok_status();
}

LoadedCheckpoints load_checkpoints(const std::string& dir, const std::string& quarantine_dir) {
  LoadedCheckpoints out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".json") names.push_back(n);
    else if (n.find(".json.tmp-") != std::string::npos) ::unlinkat(::dirfd(d), e->d_name, 0);  // an interrupted write
  }
  ::closedir(d);
  for (const auto& n : names) {
    auto c = read_checkpoint(dir + "/" + n);
    if (c.ok()) {
      out.valid.push_back(std::move(*c));
      continue;
    }
    ::mkdir(quarantine_dir.c_str(), 0700);
    std::string dest = quarantine_dir + "/" + n + "." + std::to_string(::time(nullptr));
    ::rename((dir + "/" + n).c_str(), dest.c_str());
    out.quarantined.push_back(c.status().message() + "; moved to " + dest);
  }
  return out;
}

}  // namespace berth
