// Sandbox checkpoints in the checksummed JSON record format (checksummed_json.h), version 1.
#include "berth/sandbox_checkpoint.h"


#include <nlohmann/json.hpp>

#include "berth/checksummed_json.h"

namespace berth {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;

json to_json(const SandboxCheckpoint& c) {
  json ports = json::array();
  for (const auto& p : c.port_mappings)
    ports.push_back({{"protocol", p.protocol}, {"container_port", p.container_port}, {"host_port", p.host_port}, {"host_ip", p.host_ip}});
  return {{"version", kVersion},
          {"id", c.id},
          {"metadata", {{"name", c.name}, {"namespace", c.namespace_}, {"uid", c.uid}, {"attempt", c.attempt}}},
          {"netns_path", c.netns_path},
          {"host_network", c.host_network},
          {"privileged", c.privileged},
          {"image_id", c.image_id},
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
    c.privileged = j.value("privileged", false);
    c.image_id = j.value("image_id", "");
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

std::string checkpoint_path(const std::string& dir, const std::string& id) { return record_path(dir, id); }

Status write_checkpoint(const std::string& dir, const SandboxCheckpoint& cp) {
  return write_checksummed_json(checkpoint_path(dir, cp.id), to_json(cp), "checkpoint of " + cp.id);
}

Result<SandboxCheckpoint> read_checkpoint(const std::string& path) { return read_record(path, kVersion, from_json, "checkpoint"); }

Status remove_checkpoint(const std::string& dir, const std::string& id) { return remove_record(dir, id, "checkpoint"); }

LoadedCheckpoints load_checkpoints(const std::string& dir, const std::string& quarantine_dir) {
  LoadedCheckpoints out;
  out.quarantined = load_checksummed_dir(dir, quarantine_dir, kVersion, [&](const json& j) -> Status {
    auto parsed = from_json(j);
    if (!parsed.ok()) return parsed.status();
    out.valid.push_back(std::move(parsed.value()));
    return ok_status();
  });
  return out;
}

}  // namespace berth
