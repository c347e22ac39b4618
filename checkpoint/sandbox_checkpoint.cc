// Sandbox checkpoints in the checksummed JSON record format (checksummed_json.h), version 1.
#include "berth/sandbox_checkpoint.h"


#include <nlohmann/json.hpp>

#include "berth/checksummed_json.h"

namespace berth {

using nlohmann::json;

namespace {

constexpr int kCheckpointVersion = 1;

const char* phase_name(SandboxPhase p) {
  switch (p) {
    case SandboxPhase::creating: return "creating";
    case SandboxPhase::ready: return "ready";
    case SandboxPhase::stopped: return "stopped";
  }
  return "ready";
}

json to_json(const SandboxCheckpoint& c) {
  json ports = json::array();
  for (const auto& p : c.port_mappings)
    ports.push_back({{"protocol", p.protocol}, {"container_port", p.container_port}, {"host_port", p.host_port}, {"host_ip", p.host_ip}});
  return {{"version", kCheckpointVersion},
          {"id", c.id},
          {"phase", phase_name(c.phase)},
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

Result<SandboxCheckpoint> checkpoint_from_json(const json& j) {
  RecordFields f;
  try {
    SandboxCheckpoint c;
    c.id = f.at(j, "id").get<std::string>();
    c.phase = SandboxPhase::ready;
    if (j.contains("phase")) {
      std::string phase = f.at(j, "phase").get<std::string>();
      if (phase == "creating") c.phase = SandboxPhase::creating;
      else if (phase == "stopped") c.phase = SandboxPhase::stopped;
      else if (phase != "ready") return invalid_argument("malformed: field 'phase': unknown phase '" + phase + "'");
    }
    const json& m = f.at(j, "metadata");
    c.name = f.at(m, "name", "metadata").get<std::string>();
    c.namespace_ = f.at(m, "namespace", "metadata").get<std::string>();
    c.uid = f.at(m, "uid", "metadata").get<std::string>();
    c.attempt = f.integer<uint32_t>(m, "attempt", "metadata");
    c.netns_path = f.at(j, "netns_path").get<std::string>();
    c.host_network = f.at(j, "host_network").get<bool>();
    c.privileged = j.contains("privileged") && f.at(j, "privileged").get<bool>();
    c.image_id = j.contains("image_id") ? f.at(j, "image_id").get<std::string>() : "";
    const json& modes = f.at(j, "namespace_modes");
    c.network_mode = f.integer<int>(modes, "network", "namespace_modes");
    c.pid_mode = f.integer<int>(modes, "pid", "namespace_modes");
    c.ipc_mode = f.integer<int>(modes, "ipc", "namespace_modes");
    c.cgroup_parent = f.at(j, "cgroup_parent").get<std::string>();
    c.runtime_handler = f.at(j, "runtime_handler").get<std::string>();
    c.hostname = f.at(j, "hostname").get<std::string>();
    c.log_directory = f.at(j, "log_directory").get<std::string>();
    const json& ports = f.at(j, "port_mappings");
    if (!ports.is_array() && !ports.is_null()) return invalid_argument("malformed: field 'port_mappings': type must be array, but is " + std::string(ports.type_name()));
    for (size_t i = 0; i < ports.size(); ++i) {
      const json& p = ports[i];
      const std::string at = "port_mappings[" + std::to_string(i) + "]";
      c.port_mappings.push_back({f.at(p, "protocol", at).get<std::string>(), f.integer<int32_t>(p, "container_port", at),
                                 f.integer<int32_t>(p, "host_port", at), f.at(p, "host_ip", at).get<std::string>()});
    }
    c.labels = f.at(j, "labels").get<std::map<std::string, std::string>>();
    c.annotations = f.at(j, "annotations").get<std::map<std::string, std::string>>();
    c.created_at = f.integer<int64_t>(j, "created_at");
    return c;
  } catch (const json::exception& e) {
    return f.error(e);
  }
}

}  // namespace

std::string checkpoint_path(const std::string& dir, const std::string& id) { return record_path(dir, id); }

Status write_checkpoint(const std::string& dir, const SandboxCheckpoint& cp, bool durable) {
  return write_checksummed_json(checkpoint_path(dir, cp.id), to_json(cp), "checkpoint of " + cp.id, durable);
}

Result<SandboxCheckpoint> read_checkpoint(const std::string& path) { return read_record(path, kCheckpointVersion, checkpoint_from_json, "checkpoint"); }

Status remove_checkpoint(const std::string& dir, const std::string& id) { return remove_record(dir, id, "checkpoint"); }

LoadedCheckpoints load_checkpoints(const std::string& dir, const std::string& quarantine_dir) {
  return load_records<SandboxCheckpoint>(dir, quarantine_dir, kCheckpointVersion, checkpoint_from_json);
}

}  // namespace berth
