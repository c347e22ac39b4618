// Applying resolved CDI edits to a typed OCI runtime spec; see apply_cdi_edits in berth/cdi.h. The
// spec is edited as a copy and assigned back only when every edit applied, so a failure leaves the
// caller's spec as it was. Edits from CdiRegistry::resolve are valid; ones built by hand are
// checked where a bad value would make a wrong spec silently (an env entry without '=' would
// replace the first variable, an unknown hook name would add a hook no runtime runs).
#include <algorithm>
#include <filesystem>

#include "berth/cdi.h"
#include "cdi_names.h"
#include "host_device.h"

namespace berth {
namespace {

Status add_env(oci::Process& process, const std::vector<std::string>& env) {
  for (const auto& var : env) {
    size_t eq = var.find('=');
    if (eq == 0 || eq == std::string::npos)
      return invalid_argument("env '" + cdi::printable(var) + "' is not NAME=value");
    std::string prefix = var.substr(0, eq + 1);
    auto same = std::find_if(process.env.begin(), process.env.end(),
                             [&](const std::string& e) { return e.compare(0, prefix.size(), prefix) == 0; });
    if (same != process.env.end())
      *same = var;
    else
      process.env.push_back(var);
  }
  return ok_status();
}

Status add_device_nodes(oci::Spec& spec, const std::vector<CdiDeviceNode>& nodes) {
  uint32_t uid = spec.process ? spec.process->user.uid : 0, gid = spec.process ? spec.process->user.gid : 0;
  for (const auto& node : nodes) {
    auto oci = cdi::oci_device_node(node, uid, gid);
    if (!oci.ok()) return oci.status();
    oci::Linux& linux = spec.linux ? *spec.linux : spec.linux.emplace();
    std::erase_if(linux.devices, [&](const oci::Device& d) { return d.path == node.path; });
    linux.devices.push_back(std::move(oci->device));
    if (!oci->rule) continue;
    oci::Resources& resources = linux.resources ? *linux.resources : linux.resources.emplace();
    resources.devices.push_back(std::move(*oci->rule));
  }
  return ok_status();
}

// Path components of a mount's destination: "/" and "/a" are 1, "/a/b/" is 2.
size_t depth(const oci::Mount& mount) {
  std::string d = std::filesystem::path(mount.destination).lexically_normal().string();
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return static_cast<size_t>(std::count(d.begin(), d.end(), '/'));
}

void add_mounts(std::vector<oci::Mount>& all, const std::vector<CdiMount>& mounts) {
  for (const auto& m : mounts) {
    std::erase_if(all, [&](const oci::Mount& x) { return x.destination == m.container_path; });
    all.push_back({.destination = m.container_path, .type = m.type, .source = m.host_path, .options = m.options});
  }
  // Parents before children, the order otherwise kept (the CDI reference sorts the same way).
  std::stable_sort(all.begin(), all.end(),
                   [](const oci::Mount& a, const oci::Mount& b) { return depth(a) < depth(b); });
}

Status add_hooks(oci::Hooks& all, const std::vector<CdiHook>& hooks) {
  for (const auto& h : hooks) {
    if (!cdi::is_hook_name(h.hook_name))
      return invalid_argument("hook name '" + cdi::printable(h.hook_name) + "' is not one of " + cdi::kHookNames);
    all[h.hook_name].push_back({.path = h.path, .args = h.args, .env = h.env, .timeout = h.timeout});
  }
  return ok_status();
}

void add_gids(oci::User& user, const std::vector<uint32_t>& gids) {
  for (uint32_t gid : gids) {
    if (gid == 0) continue;  // the CDI spec: "values of 0 are ignored"
    auto& list = user.additional_gids;
    if (std::find(list.begin(), list.end(), gid) == list.end()) list.push_back(gid);
  }
}

Status apply_edits(oci::Spec& spec, const CdiContainerEdits& e) {
  if (!e.env.empty())
    if (Status s = add_env(spec.process ? *spec.process : spec.process.emplace(), e.env); !s.ok()) return s;
  if (!e.device_nodes.empty())
    if (Status s = add_device_nodes(spec, e.device_nodes); !s.ok()) return s;
  if (!e.mounts.empty()) add_mounts(spec.mounts, e.mounts);
  if (!e.hooks.empty())
    if (Status s = add_hooks(spec.hooks, e.hooks); !s.ok()) return s;
  if (!e.additional_gids.empty())
    add_gids((spec.process ? *spec.process : spec.process.emplace()).user, e.additional_gids);
  return ok_status();
}

}  // namespace

Status apply_cdi_edits(oci::Spec& oci_spec, const CdiEdits& edits) {
  oci::Spec spec = oci_spec;
  for (const auto& block : edits.blocks)
    if (Status s = apply_edits(spec, block.edits); !s.ok()) return s.context("apply CDI edits of " + block.origin);
  oci_spec = std::move(spec);
  return ok_status();
}

}  // namespace berth
