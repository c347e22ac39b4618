// The spec's JSON writer; which members are left out when empty follows Go's runtime-spec (its
// `omitempty` tags), so berth writes what containerd and CRI-O would for the same spec.
#include "berth/oci_spec.h"

namespace berth::oci {

using nlohmann::json;

namespace {

// The object's own members, then the ones it kept from what it was read from.
json with_unknown(json out, const json& unknown) {
  for (const auto& [k, v] : unknown.items()) out[k] = v;
  return out;
}

template <class T>
void put_list(json& out, const char* key, const std::vector<T>& v) {
  if (!v.empty()) out[key] = v;
}
void put_string(json& out, const char* key, const std::string& v) {
  if (!v.empty()) out[key] = v;
}
template <class T>
void put_optional(json& out, const char* key, const std::optional<T>& v) {
  if (v) out[key] = *v;
}
void put_true(json& out, const char* key, bool v) {
  if (v) out[key] = true;
}
void put_map(json& out, const char* key, const std::map<std::string, std::string>& v) {
  if (!v.empty()) out[key] = v;
}

json mappings(const std::vector<IdMapping>& ids) {
  json out = json::array();
  for (const IdMapping& m : ids)
    out.push_back({{"containerID", m.container_id}, {"hostID", m.host_id}, {"size", m.length}});
  return out;
}
void put_mappings(json& out, const char* key, const std::vector<IdMapping>& v) {
  if (!v.empty()) out[key] = mappings(v);
}

json user_json(const User& u) {
  json out = {{"uid", u.uid}, {"gid", u.gid}};
  put_optional(out, "umask", u.umask);
  put_list(out, "additionalGids", u.additional_gids);
  return with_unknown(std::move(out), u.unknown);
}

json capabilities_json(const Capabilities& c) {
  json out = json::object();
  put_list(out, "bounding", c.bounding);
  put_list(out, "effective", c.effective);
  put_list(out, "inheritable", c.inheritable);
  put_list(out, "permitted", c.permitted);
  put_list(out, "ambient", c.ambient);
  return with_unknown(std::move(out), c.unknown);
}

json mount_json(const Mount& m) {
  json out = {{"destination", m.destination}};
  put_string(out, "type", m.type);
  put_string(out, "source", m.source);
  put_list(out, "options", m.options);
  put_mappings(out, "uidMappings", m.uid_mappings);
  put_mappings(out, "gidMappings", m.gid_mappings);
  return with_unknown(std::move(out), m.unknown);
}

json hook_json(const Hook& h) {
  json out = {{"path", h.path}};
  put_list(out, "args", h.args);
  put_list(out, "env", h.env);
  put_optional(out, "timeout", h.timeout);
  return with_unknown(std::move(out), h.unknown);
}

json device_json(const Device& d) {
  json out = {{"path", d.path}, {"type", d.type}, {"major", d.major}, {"minor", d.minor}};
  put_optional(out, "fileMode", d.file_mode);
  put_optional(out, "uid", d.uid);
  put_optional(out, "gid", d.gid);
  return with_unknown(std::move(out), d.unknown);
}

json rule_json(const DeviceRule& r) {
  json out = {{"allow", r.allow}};
  put_string(out, "type", r.type);
  put_optional(out, "major", r.major);
  put_optional(out, "minor", r.minor);
  put_string(out, "access", r.access);
  return with_unknown(std::move(out), r.unknown);
}

json linux_json(const Linux& l) {
  json out = json::object();
  put_mappings(out, "uidMappings", l.uid_mappings);
  put_mappings(out, "gidMappings", l.gid_mappings);
  put_map(out, "sysctl", l.sysctl);
  if (l.resources) out["resources"] = to_json(*l.resources);
  put_string(out, "cgroupsPath", l.cgroups_path);
  if (!l.namespaces.empty()) {
    json& list = out["namespaces"] = json::array();
    for (const Namespace& n : l.namespaces) {
      json ns = {{"type", n.type}};
      put_string(ns, "path", n.path);
      list.push_back(with_unknown(std::move(ns), n.unknown));
    }
  }
  if (!l.devices.empty()) {
    json& list = out["devices"] = json::array();
    for (const Device& d : l.devices) list.push_back(device_json(d));
  }
  put_optional(out, "seccomp", l.seccomp);
  put_string(out, "rootfsPropagation", l.rootfs_propagation);
  put_list(out, "maskedPaths", l.masked_paths);
  put_list(out, "readonlyPaths", l.readonly_paths);
  return with_unknown(std::move(out), l.unknown);
}

}  // namespace

json to_json(const Process& p) {
  json out = {{"user", user_json(p.user)}, {"cwd", p.cwd}};
  put_true(out, "terminal", p.terminal);
  put_list(out, "args", p.args);
  put_list(out, "env", p.env);
  if (p.capabilities) out["capabilities"] = capabilities_json(*p.capabilities);
  if (!p.rlimits.empty()) {
    json& list = out["rlimits"] = json::array();
    for (const Rlimit& r : p.rlimits)
      list.push_back(with_unknown({{"type", r.type}, {"hard", r.hard}, {"soft", r.soft}}, r.unknown));
  }
  put_true(out, "noNewPrivileges", p.no_new_privileges);
  put_string(out, "apparmorProfile", p.apparmor_profile);
  put_string(out, "selinuxLabel", p.selinux_label);
  put_optional(out, "oomScoreAdj", p.oom_score_adj);
  return with_unknown(std::move(out), p.unknown);
}

json to_json(const Resources& r) {
  json out = json::object();
  if (!r.devices.empty()) {
    json& list = out["devices"] = json::array();
    for (const DeviceRule& d : r.devices) list.push_back(rule_json(d));
  }
  if (r.cpu) {
    json cpu = json::object();
    put_optional(cpu, "shares", r.cpu->shares);
    put_optional(cpu, "quota", r.cpu->quota);
    put_optional(cpu, "period", r.cpu->period);
    put_string(cpu, "cpus", r.cpu->cpus);
    put_string(cpu, "mems", r.cpu->mems);
    out["cpu"] = with_unknown(std::move(cpu), r.cpu->unknown);
  }
  if (r.memory) {
    json memory = json::object();
    put_optional(memory, "limit", r.memory->limit);
    put_optional(memory, "swap", r.memory->swap);
    out["memory"] = with_unknown(std::move(memory), r.memory->unknown);
  }
  if (!r.hugepage_limits.empty()) {
    json& list = out["hugepageLimits"] = json::array();
    for (const HugepageLimit& h : r.hugepage_limits)
      list.push_back(with_unknown({{"pageSize", h.page_size}, {"limit", h.limit}}, h.unknown));
  }
  put_map(out, "unified", r.unified);
  return with_unknown(std::move(out), r.unknown);
}

json to_json(const Spec& s) {
  json out = {{"ociVersion", s.oci_version}};
  if (s.process) out["process"] = to_json(*s.process);
  if (s.root) {
    json root = {{"path", s.root->path}};
    put_true(root, "readonly", s.root->readonly);
    out["root"] = with_unknown(std::move(root), s.root->unknown);
  }
  put_string(out, "hostname", s.hostname);
  if (!s.mounts.empty()) {
    json& list = out["mounts"] = json::array();
    for (const Mount& m : s.mounts) list.push_back(mount_json(m));
  }
  json hooks = json::object();
  for (const auto& [name, list] : s.hooks) {
    if (list.empty()) continue;
    json& out_list = hooks[name] = json::array();
    for (const Hook& h : list) out_list.push_back(hook_json(h));
  }
  if (!hooks.empty()) out["hooks"] = std::move(hooks);
  put_map(out, "annotations", s.annotations);
  if (s.linux) out["linux"] = linux_json(*s.linux);
  return with_unknown(std::move(out), s.unknown);
}

}  // namespace berth::oci
