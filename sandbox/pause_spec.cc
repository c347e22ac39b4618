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

oci::Resources resources_of(const v1::LinuxPodSandboxConfig& linux) {
  const v1::LinuxContainerResources& r = linux.resources();
  const v1::LinuxContainerResources& o = linux.overhead();
  oci::Resources res;
  oci::CpuResources cpu;
  // The overhead adds to what the pod asks for; a limit the pod does not set stays unlimited
  // (adding the overhead to "none" would invent a limit), while shares are weights and add up.
  if (r.cpu_shares() + o.cpu_shares() > 0) cpu.shares = r.cpu_shares() + o.cpu_shares();
  if (r.cpu_quota() > 0) cpu.quota = r.cpu_quota() + o.cpu_quota();
  if (r.cpu_period() > 0 || o.cpu_period() > 0) cpu.period = r.cpu_period() > 0 ? r.cpu_period() : o.cpu_period();
  cpu.cpus = r.cpuset_cpus();
  cpu.mems = r.cpuset_mems();
  if (cpu.shares || cpu.quota || cpu.period || !cpu.cpus.empty() || !cpu.mems.empty()) res.cpu = std::move(cpu);
  if (r.memory_limit_in_bytes() > 0)
    res.memory = oci::MemoryResources{.limit = r.memory_limit_in_bytes() + o.memory_limit_in_bytes()};
  return res;
}

}  // namespace

Result<oci::Spec> build_pause_spec(const v1::PodSandboxConfig& config, const PauseSpecInputs& in) {
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

  std::map<std::string, std::string> sysctl;
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
  std::optional<json> seccomp;  // the profile's section, as the compiler reads it
  if (!sc.privileged()) {
    auto s = seccomp_section(*sreq);
    if (!s.ok()) return s.status();
    seccomp = std::move(*s);
  }
  oci::User user{.uid = static_cast<uint32_t>(sc.has_run_as_user() ? sc.run_as_user().value() : 0),
                 .gid = static_cast<uint32_t>(sc.has_run_as_group() ? sc.run_as_group().value() : 0)};
  if (sc.has_run_as_group() && !sc.has_run_as_user())
    return invalid_argument("linux.security_context.run_as_group: needs run_as_user");
  if (sc.has_run_as_user() && (sc.run_as_user().value() < 0 || sc.run_as_user().value() > 0xFFFFFFFEll))
    return invalid_argument("linux.security_context.run_as_user: " + std::to_string(sc.run_as_user().value()) +
                            " is not a valid uid");
  if (sc.has_run_as_group() && (sc.run_as_group().value() < 0 || sc.run_as_group().value() > 0xFFFFFFFEll))
    return invalid_argument("linux.security_context.run_as_group: " + std::to_string(sc.run_as_group().value()) +
                            " is not a valid gid");
  for (auto g : sc.supplemental_groups()) {
    if (g < 0 || g > 0xFFFFFFFEll)
      return invalid_argument("linux.security_context.supplemental_groups: " + std::to_string(g) +
                              " is not a valid gid");
    user.additional_gids.push_back(static_cast<uint32_t>(g));
  }
  std::vector<std::string> caps;
  if (sc.privileged()) {
    auto all = resolve_capabilities({.privileged = true});
    if (!all.ok()) return all.status();
    caps = all->caps;
  }
  oci::Spec spec{.oci_version = "1.0.2"};
  spec.process = oci::Process{.user = std::move(user),
                              .args = in.args,
                              .env = {"PATH=/"},
                              .cwd = "/",
                              .capabilities = oci::Capabilities{.bounding = caps, .effective = caps, .permitted = caps},
                              .no_new_privileges = !sc.privileged(),
                              .oom_score_adj = in.oom_score_adj};
  spec.root = oci::Root{.path = in.rootfs, .readonly = true};
  spec.mounts = {
      proc_mount(),
      dev_mount(),
      devpts_mount(false),
      {.destination = "/dev/shm", .type = "bind", .source = in.shm_path, .options = {"rbind", "rprivate", "rw"}},
      host_net && !in.userns_path.empty() ? host_sysfs_bind() : sysfs_mount(true)};
  if (!host_ipc) spec.mounts.push_back(mqueue_mount());
  oci::Linux& linux = spec.linux.emplace();
  linux.namespaces.push_back({.type = "mount"});
  if (in.cgroup_v2) linux.namespaces.push_back({.type = "cgroup"});
  if (!host_pid) linux.namespaces.push_back({.type = "pid"});
  if (!host_ipc) linux.namespaces.push_back({.type = "ipc"});
  if (!host_net) {
    linux.namespaces.push_back({.type = "uts"});
    linux.namespaces.push_back({.type = "network", .path = in.netns_path});
  }
  linux.cgroups_path = in.cgroups_path;
  linux.resources = resources_of(config.linux());
  if (!in.userns_path.empty()) add_user_namespace(linux, in.userns_path, in.uids, in.gids);
  linux.sysctl = std::move(sysctl);
  linux.seccomp = std::move(seccomp);
  if (!sc.privileged()) {
    linux.masked_paths = default_masked_paths();
    linux.readonly_paths = default_readonly_paths();
  }
  if (!host_net) spec.hostname = config.hostname();
  return spec;
}

}  // namespace berth
