// The process, root, mounts and annotations of a container's OCI spec; the linux section is built
// in container_linux_spec.cc. Defaults follow containerd's so workloads behave the same.
#include "berth/container_spec.h"

#include <algorithm>
#include <csignal>
#include <cstring>

#include "berth/base_mounts.h"
#include "berth/container_mounts.h"
#include "berth/container_security.h"
#include "berth/pod_user_namespace.h"
#include "container_linux_spec.h"

namespace berth {

namespace v1 = runtime::v1;
namespace {

constexpr const char* kDefaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

Result<std::vector<std::string>> process_env(const v1::ContainerConfig& c, const PodForContainer& pod,
                                             const ImageForContainer& image) {
  std::vector<std::string> base{"HOSTNAME=" + pod.hostname};
  bool has_path = false;
  for (const auto& e : image.process.env) {
    if (e.rfind("PATH=", 0) == 0) has_path = true;
    base.push_back(e);
  }
  if (!has_path) base.insert(base.begin() + 1, kDefaultPath);
  std::vector<std::pair<std::string, std::string>> config_env;
  for (const auto& kv : c.envs()) config_env.emplace_back(kv.key(), kv.value());
  return merge_process_env(base, config_env);
}

// Defaults every container gets (as containerd's), before the pod's and the CRI mounts.
std::vector<oci::Mount> default_mounts(bool privileged, bool host_ipc, bool userns_on_host_network) {
  std::vector<oci::Mount> m{proc_mount(),
                            dev_mount(),
                            devpts_mount(true),
                            userns_on_host_network ? host_sysfs_bind() : sysfs_mount(!privileged),
                            {.destination = "/sys/fs/cgroup",
                             .type = "cgroup",
                             .source = "cgroup",
                             .options = {"nosuid", "noexec", "nodev", "relatime", privileged ? "rw" : "ro"}}};
  if (!host_ipc) m.push_back(mqueue_mount());
  return m;
}

size_t depth(const std::string& path) { return static_cast<size_t>(std::count(path.begin(), path.end(), '/')); }

Result<std::vector<OciMount>> cri_mounts(const v1::ContainerConfig& c, const ContainerSpecInputs& in,
                                         std::string* rootfs_propagation) {
  std::vector<MountRequest> reqs;
  for (int i = 0; i < c.mounts_size(); ++i) {
    const auto& m = c.mounts(i);
    MountPropagation p = m.propagation() == v1::PROPAGATION_HOST_TO_CONTAINER ? MountPropagation::host_to_container
                         : m.propagation() == v1::PROPAGATION_BIDIRECTIONAL   ? MountPropagation::bidirectional
                                                                              : MountPropagation::private_;
    if (p == MountPropagation::bidirectional)
      *rootfs_propagation = "rshared";
    else if (p == MountPropagation::host_to_container && rootfs_propagation->empty())
      *rootfs_propagation = "rslave";
    auto source = in.image_sources.find(i);
    reqs.push_back({m.container_path(), m.host_path(), m.readonly(), p, m.recursive_read_only(), m.has_image(),
                    source == in.image_sources.end() ? "" : source->second, id_mappings_of(m.uidmappings()),
                    id_mappings_of(m.gidmappings())});
  }
  auto mounts = resolve_mounts(reqs, in.mountinfo, in.mounts);
  if (!mounts.ok()) return mounts.status();
  // Parents before children, whatever order the config gave.
  std::stable_sort(mounts->begin(), mounts->end(),
                   [](const OciMount& a, const OciMount& b) { return depth(a.destination) < depth(b.destination); });
  return mounts;
}

std::map<std::string, std::string> annotations(const v1::ContainerConfig& c, const PodForContainer& pod,
                                               const ImageForContainer& image) {
  std::map<std::string, std::string> a;
  for (const auto& [k, v] : c.annotations()) a[k] = v;
  a["io.kubernetes.cri.container-type"] = "container";
  a["io.kubernetes.cri.container-name"] = c.metadata().name();
  a["io.kubernetes.cri.sandbox-id"] = pod.id;
  a["io.kubernetes.cri.sandbox-name"] = pod.name;
  a["io.kubernetes.cri.sandbox-namespace"] = pod.namespace_;
  a["io.kubernetes.cri.sandbox-uid"] = pod.uid;
  a["io.kubernetes.cri.image-name"] = image.name;
  return a;
}

}  // namespace

Result<ContainerSpec> build_container_spec(const v1::ContainerConfig& c, const PodForContainer& pod,
                                           const ImageForContainer& image, const ContainerSpecInputs& in) {
  const auto& sc = c.linux().security_context();
  if (sc.privileged() && !pod.privileged)
    return invalid_argument("config.linux.security_context.privileged: the pod sandbox " + pod.id +
                            " is not privileged");

  auto args =
      resolve_process_args(image.process, {c.command().begin(), c.command().end()}, {c.args().begin(), c.args().end()});
  if (!args.ok()) return args.status();
  auto env = process_env(c, pod, image);
  if (!env.ok()) return env.status();
  UserRequest ureq;
  if (sc.has_run_as_user()) ureq.run_as_user = sc.run_as_user().value();
  ureq.run_as_username = sc.run_as_username();
  if (sc.has_run_as_group()) ureq.run_as_group = sc.run_as_group().value();
  ureq.supplemental_groups = {sc.supplemental_groups().begin(), sc.supplemental_groups().end()};
  ureq.image_user = image.process.user;
  ureq.strict_supplemental_groups = sc.supplemental_groups_policy() == v1::Strict;
  auto user = resolve_user(in.rootfs, ureq);
  if (!user.ok()) return user.status();

  CapabilityRequest creq{
      .add = {sc.capabilities().add_capabilities().begin(), sc.capabilities().add_capabilities().end()},
      .drop = {sc.capabilities().drop_capabilities().begin(), sc.capabilities().drop_capabilities().end()},
      .ambient = {sc.capabilities().add_ambient_capabilities().begin(),
                  sc.capabilities().add_ambient_capabilities().end()},
      .privileged = sc.privileged()};
  auto caps = resolve_capabilities(creq);
  if (!caps.ok()) return caps.status();

  // The config's working_dir was checked with the request (server/container_config_checks.cc); the
  // image's comes from its config blob.
  std::string cwd = !c.working_dir().empty()             ? c.working_dir()
                    : !image.process.working_dir.empty() ? image.process.working_dir
                                                         : "/";
  if (cwd[0] != '/')
    return invalid_argument("image " + image.name + ": config.WorkingDir '" + cwd + "' is not an absolute path");
  int64_t oom = std::max<int64_t>(c.linux().resources().oom_score_adj(), in.min_oom_score_adj);
  if (c.linux().resources().oom_score_adj() < -1000 || c.linux().resources().oom_score_adj() > 1000)
    return invalid_argument("config.linux.resources.oom_score_adj: " +
                            std::to_string(c.linux().resources().oom_score_adj()) + " is outside -1000..1000");
  oci::Process process{.terminal = c.tty(),
                       .user = {.uid = user->uid, .gid = user->gid, .additional_gids = user->additional_gids},
                       .args = *args,
                       .env = *env,
                       .cwd = cwd,
                       .capabilities = oci::Capabilities{.bounding = caps->caps,
                                                         .effective = caps->caps,
                                                         .inheritable = caps->ambient,
                                                         .permitted = caps->caps,
                                                         .ambient = caps->ambient},
                       .no_new_privileges = sc.no_new_privs(),
                       .oom_score_adj = static_cast<int>(oom)};
  process.rlimits = in.rlimits;
  auto apparmor = apparmor_profile(sc, in.host_apparmor, in.default_apparmor_profile);
  if (!apparmor.ok()) return apparmor.status();
  process.apparmor_profile = *apparmor;

  std::string rootfs_propagation;
  auto mounts = cri_mounts(c, in, &rootfs_propagation);
  if (!mounts.ok()) return mounts.status();
  auto taken = [&](const std::string& dest) {
    return std::any_of(mounts->begin(), mounts->end(), [&](const OciMount& m) { return m.destination == dest; });
  };
  std::vector<oci::Mount> spec_mounts =
      default_mounts(sc.privileged(), pod.host_ipc, pod.host_network && !pod.userns_path.empty());
  if (!taken("/dev/shm"))
    spec_mounts.push_back(
        {.destination = "/dev/shm", .type = "bind", .source = pod.shm_path, .options = {"rbind", "rprivate", "rw"}});
  const char* file_mode = sc.readonly_rootfs() ? "ro" : "rw";
  for (const char* f : {"hosts", "hostname", "resolv.conf"}) {
    std::string dest = std::string("/etc/") + f;
    if (!taken(dest))
      spec_mounts.push_back({.destination = dest,
                             .type = "bind",
                             .source = pod.files_dir + "/" + f,
                             .options = {"rbind", "rprivate", file_mode}});
  }
  std::vector<PreparedMount> prepared;
  for (const auto& m : *mounts) {
    spec_mounts.push_back({.destination = m.destination, .type = m.type, .source = m.source, .options = m.options});
    if (!m.prepared_from.empty())
      prepared.push_back({m.prepared_from, m.source, m.prepared_read_only, m.uid_mappings, m.gid_mappings, m.field});
  }

  std::optional<DeviceOwner> device_owner;
  if (in.device_ownership_from_security_context) device_owner = DeviceOwner{user->uid, user->gid};
  auto linux = linux_section(c, pod, in, sc.privileged(), caps->caps, device_owner);
  if (!linux.ok()) return linux.status();
  linux->rootfs_propagation = rootfs_propagation;

  oci::Spec spec{.oci_version = "1.0.2",
                 .process = std::move(process),
                 .root = oci::Root{.path = in.rootfs, .readonly = sc.readonly_rootfs()},
                 .mounts = std::move(spec_mounts),
                 .annotations = annotations(c, pod, image),
                 .linux = std::move(*linux)};
  return ContainerSpec{std::move(spec), std::move(*user), std::move(prepared)};
}

Result<oci::Process> exec_process(const oci::Spec& container_spec, const std::vector<std::string>& cmd, bool tty) {
  if (!container_spec.process) return internal_error("config.json: field 'process': missing");
  oci::Process p = *container_spec.process;
  p.args = cmd;
  p.terminal = tty;
  p.unknown.erase("consoleSize");
  return p;
}

int signal_number(const std::string& name) {
  if (name.empty()) return 0;
  if (std::all_of(name.begin(), name.end(), ::isdigit)) {
    int n = std::atoi(name.c_str());
    return n > 0 && n < 65 ? n : 0;
  }
  std::string s = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  for (int n = 1; n < 32; ++n) {
    const char* abbrev = sigabbrev_np(n);
    if (abbrev && s == abbrev) return n;
  }
  // Real-time signals: RTMIN, RTMIN+3 / RTMINPLUS3, RTMAX, RTMAX-2 / RTMAXMINUS2.
  auto offset = [&](size_t at) {
    std::string rest = s.substr(at);
    if (rest.rfind("PLUS", 0) == 0 || rest.rfind("MINUS", 0) == 0)
      rest = rest.substr(rest[0] == 'P' ? 4 : 5);
    else if (!rest.empty() && (rest[0] == '+' || rest[0] == '-'))
      rest = rest.substr(1);
    return rest.empty() ? 0 : std::atoi(rest.c_str());
  };
  if (s.rfind("RTMIN", 0) == 0) return SIGRTMIN + offset(5);
  if (s.rfind("RTMAX", 0) == 0) return SIGRTMAX - offset(5);
  return 0;
}

}  // namespace berth
