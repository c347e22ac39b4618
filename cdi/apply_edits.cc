// Applying resolved CDI edits to an OCI runtime spec held as JSON; see apply_cdi_edits in
// berth/cdi.h. The spec is edited as a copy and assigned back only when every edit applied, so a
// failure leaves the caller's spec as it was. A member of the wrong type (a spec of another shape)
// is an error, not an exception. Edits from CdiRegistry::resolve are valid; ones built by hand
// are checked where a bad value would make a wrong spec silently (an env entry without '=' would
// replace the first variable, an unknown hook name would add a hook no runtime runs).
#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "berth/cdi.h"
#include "cdi_names.h"
#include "host_device.h"

namespace berth {
namespace {

using json = nlohmann::json;

// parent[key] as an object or array, made when absent or null.
Result<json*> member(json& parent, const char* key, json::value_t type, const std::string& where) {
  json& v = parent[key];
  if (v.is_null()) v = json(type);
  if (v.type() != type)
    return invalid_argument("OCI spec " + where + " is not " +
                            (type == json::value_t::object ? "an object" : "an array"));
  return &v;
}

uint32_t user_id(const json& spec, const char* key) {
  const json* user = nullptr;
  if (spec.contains("process") && spec["process"].is_object() && spec["process"].contains("user"))
    user = &spec["process"]["user"];
  if (!user || !user->is_object() || !user->contains(key)) return 0;
  const json& id = (*user)[key];
  if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<uint64_t>() > UINT32_MAX) return 0;
  return id.get<uint32_t>();
}

Status add_env(json& spec, const std::vector<std::string>& env) {
  auto process = member(spec, "process", json::value_t::object, "process");
  if (!process.ok()) return process.status();
  auto list = member(**process, "env", json::value_t::array, "process.env");
  if (!list.ok()) return list.status();
  for (const auto& var : env) {
    size_t eq = var.find('=');
    if (eq == 0 || eq == std::string::npos)
      return invalid_argument("env '" + cdi::printable(var) + "' is not NAME=value");
    std::string prefix = var.substr(0, eq + 1);
    auto same = std::find_if((*list)->begin(), (*list)->end(), [&](const json& e) {
      return e.is_string() && e.get_ref<const std::string&>().compare(0, prefix.size(), prefix) == 0;
    });
    if (same != (*list)->end())
      *same = var;
    else
      (*list)->push_back(var);
  }
  return ok_status();
}

Status add_device_nodes(json& spec, const std::vector<CdiDeviceNode>& nodes) {
  uint32_t uid = user_id(spec, "uid"), gid = user_id(spec, "gid");
  for (const auto& node : nodes) {
    auto oci = cdi::oci_device_node(node, uid, gid);
    if (!oci.ok()) return oci.status();
    auto linux = member(spec, "linux", json::value_t::object, "linux");
    if (!linux.ok()) return linux.status();
    auto devices = member(**linux, "devices", json::value_t::array, "linux.devices");
    if (!devices.ok()) return devices.status();
    auto& list = **devices;
    list.erase(
        std::remove_if(list.begin(), list.end(),
                       [&](const json& d) { return d.is_object() && d.contains("path") && d["path"] == node.path; }),
        list.end());
    list.push_back(std::move(oci->device));
    if (!oci->rule) continue;
    auto resources = member(**linux, "resources", json::value_t::object, "linux.resources");
    if (!resources.ok()) return resources.status();
    auto rules = member(**resources, "devices", json::value_t::array, "linux.resources.devices");
    if (!rules.ok()) return rules.status();
    (*rules)->push_back(std::move(*oci->rule));
  }
  return ok_status();
}

// Path components of a mount's destination: "/" and "/a" are 1, "/a/b/" is 2.
size_t depth(const json& mount) {
  if (!mount.is_object() || !mount.contains("destination") || !mount["destination"].is_string()) return 0;
  std::string d = std::filesystem::path(mount["destination"].get<std::string>()).lexically_normal().string();
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return static_cast<size_t>(std::count(d.begin(), d.end(), '/'));
}

Status add_mounts(json& spec, const std::vector<CdiMount>& mounts) {
  auto list = member(spec, "mounts", json::value_t::array, "mounts");
  if (!list.ok()) return list.status();
  auto& all = **list;
  for (const auto& m : mounts) {
    all.erase(std::remove_if(all.begin(), all.end(),
                             [&](const json& x) {
                               return x.is_object() && x.contains("destination") &&
                                      x["destination"] == m.container_path;
                             }),
              all.end());
    json mount = {{"destination", m.container_path}, {"source", m.host_path}};
    if (!m.type.empty()) mount["type"] = m.type;
    if (!m.options.empty()) mount["options"] = m.options;
    all.push_back(std::move(mount));
  }
  // Parents before children, the order otherwise kept (the CDI reference sorts the same way).
  std::vector<json> sorted(all.begin(), all.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const json& a, const json& b) { return depth(a) < depth(b); });
  all = std::move(sorted);
  return ok_status();
}

Status add_hooks(json& spec, const std::vector<CdiHook>& hooks) {
  for (const auto& h : hooks) {
    if (!cdi::is_hook_name(h.hook_name))
      return invalid_argument("hook name '" + cdi::printable(h.hook_name) + "' is not one of " + cdi::kHookNames);
    auto all = member(spec, "hooks", json::value_t::object, "hooks");
    if (!all.ok()) return all.status();
    auto list = member(**all, h.hook_name.c_str(), json::value_t::array, "hooks." + h.hook_name);
    if (!list.ok()) return list.status();
    json hook = {{"path", h.path}};
    if (!h.args.empty()) hook["args"] = h.args;
    if (!h.env.empty()) hook["env"] = h.env;
    if (h.timeout) hook["timeout"] = *h.timeout;
    (*list)->push_back(std::move(hook));
  }
  return ok_status();
}

Status add_gids(json& spec, const std::vector<uint32_t>& gids) {
  for (uint32_t gid : gids) {
    if (gid == 0) continue;  // the CDI spec: "values of 0 are ignored"
    auto process = member(spec, "process", json::value_t::object, "process");
    if (!process.ok()) return process.status();
    auto user = member(**process, "user", json::value_t::object, "process.user");
    if (!user.ok()) return user.status();
    auto list = member(**user, "additionalGids", json::value_t::array, "process.user.additionalGids");
    if (!list.ok()) return list.status();
    if (std::find((*list)->begin(), (*list)->end(), json(gid)) == (*list)->end()) (*list)->push_back(gid);
  }
  return ok_status();
}

Status apply_edits(json& spec, const CdiContainerEdits& e) {
  Status s;
  if (!e.env.empty()) s = add_env(spec, e.env);
  if (s.ok() && !e.device_nodes.empty()) s = add_device_nodes(spec, e.device_nodes);
  if (s.ok() && !e.mounts.empty()) s = add_mounts(spec, e.mounts);
  if (s.ok() && !e.hooks.empty()) s = add_hooks(spec, e.hooks);
  if (s.ok() && !e.additional_gids.empty()) s = add_gids(spec, e.additional_gids);
  return s;
}

}  // namespace

Status apply_cdi_edits(nlohmann::json& oci_spec, const CdiEdits& edits) {
  try {
    if (!oci_spec.is_object()) return invalid_argument("apply CDI edits: the OCI spec is not an object");
    json spec = oci_spec;
    for (const auto& block : edits.blocks)
      if (Status s = apply_edits(spec, block.edits); !s.ok()) return s.context("apply CDI edits of " + block.origin);
    oci_spec = std::move(spec);
    return ok_status();
  } catch (const std::exception& e) {
    return internal_error(std::string("apply CDI edits: ") + e.what());
  }
}

}  // namespace berth
