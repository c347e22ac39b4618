// Namespaced sysctls are the ones the kernel scopes to an IPC or network namespace (kernel.shm*,
// kernel.msg*, kernel.sem, fs.mqueue.*, net.*); a pod may set only those of namespaces it owns.
#include "pause_spec.h"

#include "berth/base_mounts.h"
#include "berth/container_security.h"
#include "berth/seccomp_request.h"
#include "berth/user_namespace_spec.h"

namespace berth {

namespace v1 = runtime::v1;
using nlohmann::json;

namespace {

bool ipc_sysctl(const std::string& k) {
  return k == "kernel.shmall" || k == "kernel.shmmax" || k == "kernel.shmmni" || k == "kernel.shm_rmid_forced" ||
         k == "kernel.msgmax" || k == "kernel.msgmnb" || k == "kernel.msgmni" || k == "kernel.sem" ||
         k.rfind("fs.mqueue.", 0) == 0;
}

json resources_of(const v1::LinuxPodSandboxConfig& linux) {
  const v1::LinuxContainerResources& r = linux.resources();
  const v1::LinuxContainerResources& o = linux.overhead();
  json res = json::object();
  json cpu = json::object();
  // The overhead adds to what the pod asks for; a limit the pod does not set stays unlimited
  // (adding the overhead to "none" would invent a limit), while shares are weights and add up.
  if (r.cpu_shares() + o.cpu_shares() > 0) cpu["shares"] = r.cpu_shares() + o.cpu_shares();
  if (r.cpu_quota() > 0) cpu["quota"] = r.cpu_quota() + o.cpu_quota();
  if (r.cpu_period() > 0 || o.cpu_period() > 0) cpu["period"] = r.cpu_period() > 0 ? r.cpu_period() : o.cpu_period();
  if (!r.cpuset_cpus().empty()) cpu["cpus"] = r.cpuset_cpus();
  if (!r.cpuset_mems().empty()) cpu["mems"] = r.cpuset_mems();
  if (!cpu.empty()) res["cpu"] = cpu;
  if (r.memory_limit_in_bytes() > 0) res["memory"] = {{"limit", r.memory_limit_in_bytes() + o.memory_limit_in_bytes()}};
  return res;
}

}  // namespace

Result<json> build_pause_spec(const v1::PodSandboxConfig& config, const PauseSpecInputs& in) {
  const auto& sc = config.linux().security_context();
  const auto& ns = sc.namespace_options();
  for (auto [mode, field] : {std::pair{ns.network(), "network"}, {ns.pid(), "pid"}, {ns.ipc(), "ipc"}}) {
    if (mode == v1::TARGET)
      return invalid_argument(std::string("linux.security_context.namespace_options.") + field +
                              ": TARGET is for containers, not sandboxes");
    if (mode != v1::POD && mode != v1::CONTAINER && mode != v1::NODE)
      return invalid_argument(std::string("linux.security_context.namespace_options.") + field + ": unknown mode");
  }
  if (ns.network() == v1::CONTAINER)
    return invalid_argument(
        "linux.security_context.namespace_options.network: CONTAINER is not a sandbox network mode");
  if (ns.ipc() == v1::CONTAINER)
    return invalid_argument("linux.security_context.namespace_options.ipc: CONTAINER is not a sandbox IPC mode");
  bool host_net = ns.network() == v1::NODE, host_ipc = ns.ipc() == v1::NODE, host_pid = ns.pid() == v1::NODE;

  json sysctl = json::object();
  for (const auto& [k, v] : config.linux().sysctls()) {
    bool net = k.rfind("net.", 0) == 0;
    if (!net && !ipc_sysctl(k)) return invalid_argument("linux.sysctls: '" + k + "' is not a namespaced sysctl");
    if (net && host_net)
      return invalid_argument("linux.sysctls: '" + k + "' would change the host's network namespace");
    if (!net && host_ipc) return invalid_argument("linux.sysctls: '" + k + "' would change the host's IPC namespace");
    sysctl[k] = v;
  }
  auto sreq = seccomp_request_of(sc, "linux.security_context");
  if (!sreq.ok()) return sreq.status();
  std::optional<json> seccomp;
  if (!sc.privileged()) {
    auto s = seccomp_section(*sreq);
    if (!s.ok()) return s.status();
    seccomp = *s;
  }
  json user = {{"uid", sc.has_run_as_user() ? sc.run_as_user().value() : 0},
               {"gid", sc.has_run_as_group() ? sc.run_as_group().value() : 0}};
  if (sc.has_run_as_group() && !sc.has_run_as_user())
    return invalid_argument("linux.security_context.run_as_group: needs run_as_user");
  if (sc.has_run_as_user() && (sc.run_as_user().value() < 0 || sc.run_as_user().value() > 0xFFFFFFFEll))
    return invalid_argument("linux.security_context.run_as_user: " + std::to_string(sc.run_as_user().value()) +
                            " is not a valid uid");
  if (sc.supplemental_groups_size() > 0) {
    json gids = json::array();
    for (auto g : sc.supplemental_groups()) gids.push_back(g);
    user["additionalGids"] = gids;
  }
  json caps = json::array();
  if (sc.privileged()) {
    auto all = resolve_capabilities({.privileged = true});
    if (!all.ok()) return all.status();
    caps = all->caps;
  }
  json process = {{"terminal", false},
                  {"user", user},
                  {"args", in.args},
                  {"env", {"PATH=/"}},
                  {"cwd", "/"},
                  {"capabilities", {{"bounding", caps}, {"effective", caps}, {"permitted", caps}}},
                  {"noNewPrivileges", !sc.privileged()},
                  {"oomScoreAdj", in.oom_score_adj}};
  json mounts = json::array({
      proc_mount(),
      dev_mount(),
      devpts_mount(false),
      {{"destination", "/dev/shm"},
       {"type", "bind"},
       {"source", in.shm_path},
       {"options", {"rbind", "rprivate", "rw"}}},
      sysfs_mount(true),
  });
  if (!host_ipc) mounts.push_back(mqueue_mount());
  json namespaces = json::array({{{"type", "mount"}}});
  if (in.cgroup_v2) namespaces.push_back({{"type", "cgroup"}});
  if (!host_pid) namespaces.push_back({{"type", "pid"}});
  if (!host_ipc) namespaces.push_back({{"type", "ipc"}});
  if (!host_net) {
    namespaces.push_back({{"type", "uts"}});
    namespaces.push_back({{"type", "network"}, {"path", in.netns_path}});
  }
  json linux = {
      {"namespaces", namespaces}, {"cgroupsPath", in.cgroups_path}, {"resources", resources_of(config.linux())}};
  if (!in.userns_path.empty()) add_user_namespace(linux, in.userns_path, in.uids, in.gids);
  if (!sysctl.empty()) linux["sysctl"] = sysctl;
  if (seccomp) linux["seccomp"] = *seccomp;
  if (!sc.privileged()) {
    linux["maskedPaths"] = default_masked_paths();
    linux["readonlyPaths"] = default_readonly_paths();
  }
  json spec = {{"ociVersion", "1.0.2"},
               {"process", process},
               {"root", {{"path", in.rootfs}, {"readonly", true}}},
               {"mounts", mounts},
               {"linux", linux}};
  if (!host_net && !config.hostname().empty()) spec["hostname"] = config.hostname();
  return spec;
}

}  // namespace berth
