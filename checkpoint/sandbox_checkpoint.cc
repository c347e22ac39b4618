// Sandbox checkpoints in the checksummed JSON record format (checksummed_json.h), version 1.
#include "berth/sandbox_checkpoint.h"

#include <nlohmann/json.hpp>

#include "berth/checksummed_json.h"
#include "berth/json_fields.h"

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

json mappings_json(const std::vector<IdMapping>& ids) {
  json out = json::array();
  for (const IdMapping& m : ids)
    out.push_back({{"container_id", m.container_id}, {"host_id", m.host_id}, {"length", m.length}});
  return out;
}

std::vector<IdMapping> mappings_from(JsonFields& f, const char* key) {
  std::vector<IdMapping> out;
  f.required(key);
  if (const json* a = f.array(key)) {
    for (size_t i = 0; i < a->size(); ++i) {
      JsonFields mf = f.nested((*a)[i], std::string(key) + "[" + std::to_string(i) + "]");
      out.push_back({mf.required_integer<uint32_t>("container_id"), mf.required_integer<uint32_t>("host_id"),
                     mf.required_integer<uint32_t>("length")});
    }
  }
  return out;
}

json to_json(const SandboxCheckpoint& c) {
  json ports = json::array();
  for (const auto& p : c.port_mappings)
    ports.push_back({{"protocol", p.protocol},
                     {"container_port", p.container_port},
                     {"host_port", p.host_port},
                     {"host_ip", p.host_ip}});
  json out = {{"version", kCheckpointVersion},
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
              {"resources", c.resources},
              {"labels", c.labels},
              {"annotations", c.annotations},
              {"created_at", c.created_at}};
  if (!c.userns_path.empty())
    out["userns"] = {
        {"path", c.userns_path}, {"uids", mappings_json(c.uid_mappings)}, {"gids", mappings_json(c.gid_mappings)}};
  return out;
}

Result<SandboxCheckpoint> checkpoint_from_json(const json& j) {
  JsonFields f(j);
  SandboxCheckpoint c;
  c.id = f.required_string("id");
  c.phase = SandboxPhase::ready;
  if (std::string phase = f.string("phase", "ready"); phase == "creating")
    c.phase = SandboxPhase::creating;
  else if (phase == "stopped")
    c.phase = SandboxPhase::stopped;
  else if (phase != "ready")
    f.fail("phase", "unknown phase '" + phase + "'");
  if (const json* m = f.required_object("metadata")) {
    JsonFields mf = f.nested(*m, "metadata");
    c.name = mf.required_string("name");
    c.namespace_ = mf.required_string("namespace");
    c.uid = mf.required_string("uid");
    c.attempt = mf.required_integer<uint32_t>("attempt");
  }
  c.netns_path = f.required_string("netns_path");
  c.host_network = f.required_boolean("host_network");
  c.privileged = f.boolean("privileged", false);
  c.image_id = f.string("image_id");
  if (const json* modes = f.required_object("namespace_modes")) {
    JsonFields nf = f.nested(*modes, "namespace_modes");
    c.network_mode = nf.required_integer<int>("network");
    c.pid_mode = nf.required_integer<int>("pid");
    c.ipc_mode = nf.required_integer<int>("ipc");
  }
  c.cgroup_parent = f.required_string("cgroup_parent");
  c.runtime_handler = f.required_string("runtime_handler");
  c.hostname = f.required_string("hostname");
  c.log_directory = f.required_string("log_directory");
  f.required("port_mappings");
  if (const json* ports = f.array("port_mappings")) {
    for (size_t i = 0; i < ports->size(); ++i) {
      JsonFields pf = f.nested((*ports)[i], "port_mappings[" + std::to_string(i) + "]");
      c.port_mappings.push_back({pf.required_string("protocol"), pf.required_integer<int32_t>("container_port"),
                                 pf.required_integer<int32_t>("host_port"), pf.required_string("host_ip")});
    }
  }
  f.required_object("labels");
  c.labels = f.string_map("labels");
  f.required_object("annotations");
  c.annotations = f.string_map("annotations");
  c.created_at = f.required_integer<int64_t>("created_at");
  c.resources = f.string("resources");
  if (const json* u = f.object("userns")) {
    JsonFields uf = f.nested(*u, "userns");
    c.userns_path = uf.required_string("path");
    c.uid_mappings = mappings_from(uf, "uids");
    c.gid_mappings = mappings_from(uf, "gids");
  }
  if (!f.ok()) return f.status().context("malformed");
  return c;
}

}  // namespace

std::string checkpoint_path(const std::string& dir, const std::string& id) { return record_path(dir, id); }

Status write_checkpoint(const std::string& dir, const SandboxCheckpoint& cp, bool durable) {
  return write_checksummed_json(checkpoint_path(dir, cp.id), to_json(cp), "checkpoint of " + cp.id, durable);
}

Result<SandboxCheckpoint> read_checkpoint(const std::string& path) {
  return read_record(path, kCheckpointVersion, checkpoint_from_json, "checkpoint");
}

Status remove_checkpoint(const std::string& dir, const std::string& id) { return remove_record(dir, id, "checkpoint"); }

LoadedCheckpoints load_checkpoints(const std::string& dir, const std::string& quarantine_dir) {
  return load_records<SandboxCheckpoint>(dir, quarantine_dir, kCheckpointVersion, checkpoint_from_json);
}

}  // namespace berth
