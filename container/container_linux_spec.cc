// The linux section of a container's spec: which of the pod's namespaces it joins (by the pause's
// /proc/<pid>/ns files and the pinned netns; a cgroup namespace of its own on cgroup v2 hosts), its
// cgroup, resources, devices, seccomp and the masked and read-only paths: the request's lists, or
// berth's defaults when a list is empty. kubelet sends its defaults, and empty lists only for
// procMount Unmasked, which it allows only in a user namespace: in a pod with a user namespace of
// its own an empty list is honoured, elsewhere it gets the defaults (a client leaving them out must
// not unmask the host's /proc).
#include "container_linux_spec.h"

#include "berth/container_devices.h"
#include "berth/container_security.h"
#include "berth/seccomp_request.h"
#include "berth/user_namespace_spec.h"

namespace berth {

namespace v1 = runtime::v1;
namespace {

std::string ns_path(int pid, const char* ns) { return "/proc/" + std::to_string(pid) + "/ns/" + ns; }

const std::vector<std::string> kNone;

template <class List>
std::vector<std::string> or_default(const List& asked, const std::vector<std::string>& defaults) {
  if (asked.empty()) return defaults;
  return {asked.begin(), asked.end()};
}

Result<std::vector<oci::Namespace>> namespaces(const v1::ContainerConfig& c, const PodForContainer& pod,
                                               const ContainerSpecInputs& in) {
  const auto& opt = c.linux().security_context().namespace_options();
  std::vector<oci::Namespace> ns{{.type = "mount"}};
  // On cgroup v2 the container sees its own cgroup as the root of /sys/fs/cgroup, as containerd
  // and CRI-O do; on v1 hosts runtimes keep the host's cgroup namespace.
  if (in.cgroup_v2) ns.push_back({.type = "cgroup"});
  if (!pod.host_network) {
    ns.push_back({.type = "network", .path = pod.netns_path});
    ns.push_back({.type = "uts", .path = ns_path(pod.pid, "uts")});
  }
  if (!pod.host_ipc) ns.push_back({.type = "ipc", .path = ns_path(pod.pid, "ipc")});
  switch (opt.pid()) {
    case v1::POD:
      if (!pod.host_pid) ns.push_back({.type = "pid", .path = ns_path(pod.pid, "pid")});
      break;
    case v1::CONTAINER: ns.push_back({.type = "pid"}); break;
    case v1::NODE:
      if (!pod.host_pid)
        return invalid_argument(
            "config.linux.security_context.namespace_options.pid: NODE in a pod whose sandbox has its own PID "
            "namespace");
      break;
    case v1::TARGET:
      if (opt.target_id().empty() || in.target_pid <= 0)
        return invalid_argument("config.linux.security_context.namespace_options.target_id: '" + opt.target_id() +
                                "' is not a running container of this pod");
      ns.push_back({.type = "pid", .path = ns_path(in.target_pid, "pid")});
      break;
    default: return invalid_argument("config.linux.security_context.namespace_options.pid: unknown mode");
  }
  return ns;
}

Result<std::vector<oci::Device>> devices(const v1::ContainerConfig& c, bool privileged,
                                         std::optional<DeviceOwner> owner, std::vector<oci::DeviceRule>* rules) {
  std::vector<DeviceRequest> reqs;
  for (const auto& d : c.devices()) reqs.push_back({d.container_path(), d.host_path(), d.permissions()});
  auto resolved = resolve_devices(reqs);
  if (!resolved.ok()) return resolved.status();
  // device_ownership_from_security_context: the devices asked for (a GPU, a DRA driver's) are the
  // container user's, so a non-root workload can open them; a privileged container's host
  // devices keep their owners, as containerd's and CRI-O's do.
  if (owner)
    for (auto& d : *resolved) {
      d.uid = owner->uid;
      d.gid = owner->gid;
    }
  if (privileged) {
    auto host = host_devices();
    if (!host.ok()) return host.status();
    resolved->insert(resolved->end(), host->begin(), host->end());
  }
  std::vector<oci::Device> out;
  // Deny all, then allow each device given; runc adds its default devices (null, zero, tty, ...).
  *rules = {{.allow = privileged, .access = "rwm"}};
  for (const auto& d : *resolved) {
    out.push_back({.type = std::string(1, d.type),
                   .path = d.path,
                   .major = d.major,
                   .minor = d.minor,
                   .file_mode = d.file_mode,
                   .uid = d.uid,
                   .gid = d.gid});
    if (!privileged)
      rules->push_back(
          {.allow = true, .type = std::string(1, d.type), .major = d.major, .minor = d.minor, .access = d.access});
  }
  return out;
}

}  // namespace

Result<oci::Resources> oci_resources(const v1::LinuxContainerResources& r, bool cgroup_v2) {
  const std::string field = "config.linux.resources.";
  oci::Resources res;
  if (r.cpu_shares() < 0 || r.cpu_quota() < -1 || r.cpu_period() < 0 || r.memory_limit_in_bytes() < 0)
    return invalid_argument(field + "*: cpu_shares, cpu_period and memory_limit_in_bytes may not be negative");
  oci::CpuResources cpu;
  if (r.cpu_shares() > 0) cpu.shares = r.cpu_shares();
  if (r.cpu_quota() != 0) cpu.quota = r.cpu_quota();
  if (r.cpu_period() > 0) cpu.period = r.cpu_period();
  cpu.cpus = r.cpuset_cpus();
  cpu.mems = r.cpuset_mems();
  if (cpu.shares || cpu.quota || cpu.period || !cpu.cpus.empty() || !cpu.mems.empty()) res.cpu = std::move(cpu);
  oci::MemoryResources mem;
  if (r.memory_limit_in_bytes() > 0) mem.limit = r.memory_limit_in_bytes();
  if (r.memory_swap_limit_in_bytes() > 0) {
    if (r.memory_limit_in_bytes() > 0 && r.memory_swap_limit_in_bytes() < r.memory_limit_in_bytes())
      return invalid_argument(field + "memory_swap_limit_in_bytes: smaller than memory_limit_in_bytes");
    mem.swap = r.memory_swap_limit_in_bytes();
  }
  if (mem.limit || mem.swap) res.memory = std::move(mem);
  for (const auto& h : r.hugepage_limits()) {
    if (h.page_size().empty()) return invalid_argument(field + "hugepage_limits: page_size must not be empty");
    res.hugepage_limits.push_back({.page_size = h.page_size(), .limit = h.limit()});
  }
  if (r.unified_size() > 0) {
    if (!cgroup_v2) return invalid_argument(field + "unified: needs a cgroup v2 host; this host runs cgroup v1");
    for (const auto& [k, v] : r.unified()) res.unified[k] = v;
  }
  return res;
}

Result<oci::Linux> linux_section(const v1::ContainerConfig& c, const PodForContainer& pod,
                                 const ContainerSpecInputs& in, bool privileged,
                                 const std::vector<std::string>& capabilities,
                                 std::optional<DeviceOwner> device_owner) {
  const auto& sc = c.linux().security_context();
  auto ns = namespaces(c, pod, in);
  if (!ns.ok()) return ns.status();
  auto res = oci_resources(c.linux().resources(), in.cgroup_v2);
  if (!res.ok()) return res.status();
  auto devs = devices(c, privileged, device_owner, &res->devices);
  if (!devs.ok()) return devs.status();
  oci::Linux linux{.resources = std::move(*res),
                   .cgroups_path = in.cgroups_path,
                   .namespaces = std::move(*ns),
                   .devices = std::move(*devs)};
  if (!pod.userns_path.empty()) add_user_namespace(linux, pod.userns_path, pod.userns_uids, pod.userns_gids);
  if (!privileged) {
    auto sreq = seccomp_request_of(sc, "config.linux.security_context");
    if (!sreq.ok()) return sreq.status();
    sreq->capabilities = capabilities;
    auto seccomp = seccomp_section(*sreq);
    if (!seccomp.ok()) return seccomp.status();
    linux.seccomp = std::move(*seccomp);
    bool own_userns = !pod.userns_path.empty();
    linux.masked_paths = or_default(sc.masked_paths(), own_userns ? kNone : default_masked_paths());
    linux.readonly_paths = or_default(sc.readonly_paths(), own_userns ? kNone : default_readonly_paths());
  }
  return linux;
}

Result<std::string> apparmor_profile(const v1::LinuxContainerSecurityContext& sc, bool host_apparmor,
                                     const std::string& default_profile) {
  std::string field = "config.linux.security_context.apparmor";
  std::string kind, name;
  if (sc.has_apparmor()) {
    switch (sc.apparmor().profile_type()) {
      case v1::SecurityProfile::RuntimeDefault: kind = "default"; break;
      case v1::SecurityProfile::Unconfined: kind = "unconfined"; break;
      case v1::SecurityProfile::Localhost: kind = "localhost", name = sc.apparmor().localhost_ref(); break;
      default: return invalid_argument(field + ": unknown profile type");
    }
  } else {
    field = "config.linux.security_context.apparmor_profile";
    const std::string& p = sc.apparmor_profile();
    if (p.empty() || p == "runtime/default")
      kind = "default";
    else if (p == "unconfined")
      kind = "unconfined";
    else if (p.rfind("localhost/", 0) == 0)
      kind = "localhost", name = p.substr(10);
    else
      return invalid_argument(field + ": unknown profile '" + p + "'");
  }
  if (sc.privileged() && kind != "localhost") return std::string(host_apparmor ? "unconfined" : "");
  if (kind == "localhost") {
    if (name.empty()) return invalid_argument(field + ": a Localhost profile needs a name");
    if (!host_apparmor)
      return invalid_argument(field + ": profile '" + name + "' asked for, but AppArmor is not enabled on this host");
    return name;
  }
  if (!host_apparmor) return std::string();
  return kind == "unconfined" ? std::string("unconfined") : default_profile;
}

}  // namespace berth
