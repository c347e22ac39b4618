// Sandbox lifecycle: opening the manager, RunPodSandbox step by step (CNI ADD beside everything
// from the netns on), and leases. RunPodSandbox records the sandbox (phase "creating") before it makes
// anything, and on any failure releases everything through the same destroy() that
// RemovePodSandbox uses, so an undo can never miss a step a later version adds. Recovery,
// tear-down (stop and remove) and the views (status, list, info) have their own files.
#include "berth/own_privileges.h"
#include "berth/sandbox_manager.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <spdlog/spdlog.h>
#include <system_error>

#include "berth/atomic_file.h"
#include "berth/cgroups_path.h"
#include "berth/fault_point.h"
#include "berth/lexical_path.h"
#include "berth/object_id.h"
#include "berth/private_dir.h"
#include "berth/process_identity.h"
#include "berth/wall_clock.h"
#include "netns.h"
#include "network_setup.h"
#include "pause_launch.h"
#include "pause_spec.h"
#include "pod_mounts.h"
#include "pod_resources.h"
#include "sandbox_files.h"
#include "sandbox_state.h"

namespace berth {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

bool Sandbox::ready_locked() const {
  if (!pause_expected_locked()) return false;
  return pidfd ? pidfd_alive(pidfd.get()) : process_start_time(pid) != 0;
}

std::string sandbox_name_key(const SandboxCheckpoint& cp) {
  return cp.name + "_" + cp.namespace_ + "_" + cp.uid + "_" + std::to_string(cp.attempt);
}

Result<OciRuntime> SandboxManager::Impl::runtime_for(const std::string& handler) const {
  return opt.runtimes.runtime_for(handler);
}

int SandboxManager::Impl::oom_score_adj(int wanted) {
  int floor = own_privileges().oom_floor();
  if (wanted >= floor) return wanted;
  std::call_once(oom_warning, [&] {
    spdlog::warn("berthd lacks CAP_SYS_RESOURCE: OOM score adjustments below its own ({}) are raised to {}", floor, floor);
  });
  return floor;
}

// The pod's own files and its /dev/shm belong to its root (the host id container root maps to), so
// the containers' root can write them as it could without a user namespace.
static Status give_files_to_pod_root(const Sandbox& sb) {
  uint32_t uid = 0, gid = 0;
  map_to_host(sb.cp.uid_mappings, 0, &uid);
  map_to_host(sb.cp.gid_mappings, 0, &gid);
  std::vector<std::string> paths = {sb.bundle + "/resolv.conf", sb.bundle + "/hostname", sb.bundle + "/hosts"};
  if (sb.cp.ipc_mode != v1::NODE) paths.push_back(sb.shm_path);
  for (const std::string& p : paths)
    if (::chown(p.c_str(), uid, gid) != 0) return errno_status(errno, "give " + p + " to the pod's root (" + std::to_string(uid) + ")");
  return ok_status();
}

std::shared_ptr<Sandbox> SandboxManager::Impl::find(const std::string& id_or_prefix, Status* err) {
  std::lock_guard lock(mu);
  return find_by_id_or_prefix(sandboxes, id_or_prefix, "pod sandbox", "pod_sandbox_id", err);
}

SandboxManager::SandboxManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SandboxManager::~SandboxManager() = default;

Result<std::unique_ptr<SandboxManager>> SandboxManager::open(SandboxManagerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->opt = std::move(options);
  impl->pause_rootfs = impl->opt.state_dir + "/pause/rootfs";
  impl->netns_dir = impl->opt.state_dir + "/netns";
  impl->userns_dir = impl->opt.state_dir + "/userns";
  impl->bundles_dir = impl->opt.state_dir + "/sandboxes";
  impl->checkpoints_dir = impl->opt.root_dir + "/sandboxes";
  impl->quarantine_dir = impl->opt.root_dir + "/sandboxes-quarantine";
  std::error_code ec;
  for (const auto& d : {impl->netns_dir, impl->userns_dir, impl->bundles_dir, impl->checkpoints_dir, impl->opt.state_dir + "/pause"})
    if (Status s = make_private_dir(d); !s.ok()) return s.context("sandboxes");
  // The pause rootfs: berth-pause and the mount points runc needs, shared read-only by every pause.
  for (const char* d : {"", "/proc", "/dev", "/sys", "/etc"}) fs::create_directories(impl->pause_rootfs + d, ec);
  // Copied then renamed into place: pauses of recovered sandboxes may be running the old file.
  if (Status s = copy_file_atomically(impl->opt.pause_binary, impl->pause_rootfs + "/pause", 0755); !s.ok())
    return s.context("sandboxes: install pause binary " + impl->opt.pause_binary);

  impl->cgroup_parents = std::make_unique<CgroupParents>(impl->opt.root_dir + "/cgroup-parents.json");
  impl->recover();
  return std::unique_ptr<SandboxManager>(new SandboxManager(std::move(impl)));
}

Result<std::string> SandboxManager::run(const v1::PodSandboxConfig& config, const std::string& handler) {
  const auto& md = config.metadata();
  if (md.name().empty()) return invalid_argument("config.metadata.name: must not be empty");
  if (md.namespace_().empty()) return invalid_argument("config.metadata.namespace: must not be empty");
  if (md.uid().empty()) return invalid_argument("config.metadata.uid: must not be empty");
  auto rt = impl_->runtime_for(handler);
  if (!rt.ok()) return rt.status();
  const auto& ns = config.linux().security_context().namespace_options();
  bool host_net = ns.network() == v1::NODE;
  auto userns = pod_user_namespace(ns, "config.linux.security_context.namespace_options");
  if (!userns.ok()) return userns.status();
  if (userns->own && !impl_->opt.user_namespaces.ok())
    return failed_precondition("config.linux.security_context.namespace_options.userns_options: this node cannot give pods "
                               "user namespaces of their own: " + impl_->opt.user_namespaces.message());
  std::string id = new_object_id();
  auto cgroups = cgroups_path_for(config.linux().cgroup_parent(), id, impl_->opt.runtimes.systemd_cgroup());
  if (!cgroups.ok()) return cgroups.status();

  auto sb = std::make_shared<Sandbox>();
  sb->bundle = impl_->bundles_dir + "/" + id;
  sb->cgroups_path = *cgroups;
  sb->shm_path = ns.ipc() == v1::NODE ? "/dev/shm" : sb->bundle + "/shm";
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  SandboxCheckpoint& cp = sb->cp;
  cp.id = id;
  cp.phase = SandboxPhase::creating;
  cp.name = md.name();
  cp.namespace_ = md.namespace_();
  cp.uid = md.uid();
  cp.attempt = md.attempt();
  cp.netns_path = host_net ? "" : impl_->netns_dir + "/" + id;
  cp.host_network = host_net;
  cp.privileged = config.linux().security_context().privileged();
  cp.network_mode = ns.network();
  cp.pid_mode = ns.pid();
  cp.ipc_mode = ns.ipc();
  cp.cgroup_parent = config.linux().cgroup_parent();
  cp.runtime_handler = impl_->opt.runtimes.resolve(handler);
  cp.hostname = host_net || config.hostname().empty() ? std::string(host) : config.hostname();
  cp.log_directory = lexically_normal_dir(config.log_directory());
  for (const auto& p : config.port_mappings())
    cp.port_mappings.push_back({v1::Protocol_Name(p.protocol()), p.container_port(), p.host_port(), p.host_ip()});
  cp.labels = {config.labels().begin(), config.labels().end()};
  cp.annotations = {config.annotations().begin(), config.annotations().end()};
  cp.created_at = wall_clock_ns();
  if (userns->own) {
    cp.userns_path = impl_->userns_dir + "/" + id;
    cp.uid_mappings = userns->uids;
    cp.gid_mappings = userns->gids;
  }

  if (Status s = impl_->names.reserve(sandbox_name_key(cp), id, "sandbox"); !s.ok()) return s;
  std::lock_guard op(sb->op);
  sb->runtime_may_exist = false;
  const std::string what = "run pod sandbox " + md.namespace_() + "/" + md.name();
  NetworkSetup network;
  auto fail = [&](const Status& s) -> Status {
    network.abandon(id);
    if (Status undo = impl_->destroy(*sb); !undo.ok()) {
      // Listed NOTREADY from now on, so Stop/Remove (or the next start's recovery) finish it.
      spdlog::error("sandbox {}: undo of a failed run left work for stop/remove: {}", id, undo.message());
      std::lock_guard lock(impl_->mu);
      impl_->sandboxes[id] = sb;
    }
    return s.context(what);
  };

  // The record comes first: from here on a crash leaves a checkpoint that recovery undoes.
  if (Status s = write_checkpoint(impl_->checkpoints_dir, cp); !s.ok()) {
    impl_->names.release(sandbox_name_key(cp), id);
    return s.context(what);
  }
  fault_point(FaultPoint::run_pod_sandbox_checkpoint_created);
  // CNI ADD needs the pinned netns and nothing else of the sandbox: it starts now, records its
  // intent while the netns is made, and runs its plugins beside the files and the pause.
  if (!host_net && impl_->opt.network)
    network.start(*impl_->opt.network, {id, md.name(), md.namespace_(), md.uid(), cp.netns_path, &config, {}});
  if (::mkdir(sb->bundle.c_str(), 0700) != 0) return fail(errno_status(errno, "mkdir " + sb->bundle));
  if (userns->own) {
    uint32_t root_gid = 0;
    map_to_host(userns->gids, 0, &root_gid);
    if (Status s = impl_->open_path_to_pod_root(sb->bundle, root_gid); !s.ok()) return fail(s);
  }
  fault_point(FaultPoint::run_pod_sandbox_bundle_made);
  if (ns.ipc() != v1::NODE)
    if (Status s = mount_pod_shm(sb->shm_path); !s.ok()) return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_shm_mounted);
  if (userns->own) {
    if (Status s = create_pinned_userns_netns(cp.uid_mappings, cp.gid_mappings, cp.userns_path, cp.netns_path); !s.ok()) return fail(s);
  } else if (!host_net) {
    if (auto pin = create_pinned_netns(impl_->netns_dir, id); !pin.ok()) return fail(pin.status());
  }
  network.netns_made(ok_status());
  fault_point(FaultPoint::run_pod_sandbox_netns_pinned);

  ResolvConfSettings dns{{config.dns_config().servers().begin(), config.dns_config().servers().end()},
                         {config.dns_config().searches().begin(), config.dns_config().searches().end()},
                         {config.dns_config().options().begin(), config.dns_config().options().end()}};
  if (host_net) dns = {};
  for (Status s : {write_resolv_conf(sb->bundle + "/resolv.conf", dns), write_hostname_file(sb->bundle + "/hostname", cp.hostname),
                   write_hosts_file(sb->bundle + "/hosts", cp.hostname)})
    if (!s.ok()) return fail(s);
  if (userns->own)
    if (Status s = give_files_to_pod_root(*sb); !s.ok()) return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_files_written);

  PauseSpecInputs spec_in{.rootfs = impl_->pause_rootfs, .netns_path = cp.netns_path, .cgroups_path = sb->cgroups_path,
                          .shm_path = sb->shm_path, .oom_score_adj = impl_->oom_score_adj(-998), .cgroup_v2 = host_cgroup_v2(),
                          .userns_path = cp.userns_path, .uids = cp.uid_mappings, .gids = cp.gid_mappings};
  Result<std::optional<PauseImage>> image = std::optional<PauseImage>();
  if (impl_->opt.images) image = impl_->opt.images->pause_image();
  if (!image.ok()) return fail(image.status().context("sandbox image"));
  if (*image) {
    cp.image_id = (*image)->id;  // held by pause_image(), released by destroy()
    auto root = mount_image_rootfs(**image, sb->bundle + "/rootfs");
    if (!root.ok()) return fail(root.status());
    spec_in.rootfs = *root;
    spec_in.args = (*image)->args;
  }
  auto spec = build_pause_spec(config, spec_in);
  if (!spec.ok()) return fail(spec.status());
  if (Status s = write_file_atomically(sb->bundle + "/config.json", spec->dump(), 0600, false); !s.ok()) return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_spec_written);

  if (!impl_->opt.runtimes.systemd_cgroup())
    if (Status s = impl_->cgroup_parents->note_missing(cgroup_dir_of(sb->cgroups_path, false)); !s.ok()) return fail(s);

  // The embedded pause starts without the runtime (two runtime execs less per pod); an image's
  // pause, or a spec the launcher does not apply, goes through the runtime.
  auto start_pause = [&]() -> Status {
    Result<pid_t> launched = Status(Code::unimplemented, "an image's pause");
    const bool host_processes = impl_->opt.runtimes.features(handler).host_processes;
    if (!host_processes) launched = Status(Code::unimplemented, "handler " + impl_->opt.runtimes.resolve(handler) + " does not run host processes");
    if (!*image && host_processes) {
      fault_point(FaultPoint::run_pod_sandbox_runtime_created);
      launched = launch_pause(impl_->opt.pause_launcher, *spec, impl_->opt.runtimes.systemd_cgroup(), impl_->seccomp_programs);
      if (!launched.ok() && launched.status().code() != Code::unimplemented) return launched.status();
    }
    if (launched.ok()) {
      // For recovery, which finds the pause by it, as it would the runtime's.
      if (Status s = write_file_atomically(sb->bundle + "/pid", std::to_string(*launched), 0600, false); !s.ok()) {
        std::lock_guard lock(sb->mu);
        sb->pid = *launched;
        sb->pidfd = open_pidfd(*launched);
        return s;
      }
    } else {
      spdlog::debug("sandbox {}: pause through the runtime: {}", id, launched.status().message());
      sb->runtime_may_exist = true;
      if (Status s = rt->create(id, sb->bundle); !s.ok()) return s;
      fault_point(FaultPoint::run_pod_sandbox_runtime_created);
      if (Status s = rt->start(id); !s.ok()) return s;
    }
    std::lock_guard lock(sb->mu);
    sb->pid = launched.ok() ? *launched : read_pid_file(sb->bundle + "/pid");
    sb->pidfd = open_pidfd(sb->pid);
    return ok_status();
  };
  Status started = start_pause();
  if (!started.ok()) return fail(started);
  fault_point(FaultPoint::run_pod_sandbox_runtime_started);
  auto ips = network.finish();
  if (!ips.ok()) return fail(ips.status());
  {
    std::lock_guard lock(sb->mu);
    sb->ips = *ips;
  }
  fault_point(FaultPoint::run_pod_sandbox_network_ready);
  {
    std::lock_guard lock(sb->mu);
    cp.phase = SandboxPhase::ready;
  }
  if (Status s = write_checkpoint(impl_->checkpoints_dir, cp, false); !s.ok()) return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_ready_recorded);
  std::lock_guard lock(impl_->mu);
  impl_->sandboxes[id] = sb;
  return id;
}

Result<SandboxLease> SandboxManager::lease(const std::string& id_or_prefix) {
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err;
  {
    std::lock_guard lock(s->mu);
    if (s->closing || s->removed) return failed_precondition("pod sandbox " + s->cp.id + " is being stopped or removed");
    if (!s->ready_locked()) return failed_precondition("pod sandbox " + s->cp.id + " is not ready");
    ++s->leases;
  }
  auto inf = info(s->cp.id);
  std::shared_ptr<void> hold(nullptr, [s](void*) {
    std::lock_guard lock(s->mu);
    if (--s->leases == 0) s->leases_released.notify_all();
  });
  if (!inf) return not_found("pod sandbox " + id_or_prefix + " not found");
  return SandboxLease{*inf, std::move(hold)};
}

Status SandboxManager::update_resources(const std::string& id_or_prefix, const v1::LinuxContainerResources& overhead,
                                        const v1::LinuxContainerResources& resources) {
  auto limits = pod_cgroup_limits(overhead, resources);
  if (!limits.ok()) return limits.status();
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err;
  std::lock_guard op(s->op);
  const std::string what = "update resources of pod sandbox " + s->cp.id;
  if (!s->ready()) return failed_precondition(what + ": it is not ready");
  // Without a parent of its own the pod shares berth's default cgroup with every other such pod.
  if (s->cp.cgroup_parent.empty()) return failed_precondition(what + ": it has no cgroup of its own (linux.cgroup_parent is unset)");
  std::string pause_dir = cgroup_dir_of(s->cgroups_path, impl_->opt.runtimes.systemd_cgroup());
  std::string pod_dir = pause_dir.substr(0, pause_dir.rfind('/'));
  // kubelet has already set the pod cgroup it made (and decides whether it has a limit at all):
  // the call informs. Only a pod cgroup berth made for the pod is berth's to resize.
  if (impl_->cgroup_parents->made(pod_dir)) {
    if (Status w = write_cgroup_limits(pod_dir, *limits, host_cgroup_v2()); !w.ok()) return w.context(what);
  } else {
    spdlog::debug("sandboxes: {}: recorded; its cgroup {} is not berth's to write", what, pod_dir);
  }
  SandboxCheckpoint cp;
  {
    std::lock_guard lock(s->mu);
    s->cp.resources = cgroup_limits_json(*limits).dump();
    cp = s->cp;
  }
  return write_checkpoint(impl_->checkpoints_dir, cp, false).context(what);
}

// The runtime starts a userns pod's pause, and its containers, as the pod's root, an unprivileged
// id on the node: the dirs on the way to the rootfs and the pod's files must let it through. The
// shared ones become 0711 (traversable, not listable), as containerd's are; the pod's bundle, which
// holds its /dev/shm and files, only root's and the pod's root group's (0710, root:<group>), so no
// other user of the node reaches what the pod keeps there.
Status SandboxManager::Impl::open_path_to_pod_root(const std::string& bundle, uint32_t root_gid) {
  for (const std::string& d : {opt.state_dir, opt.state_dir + "/pause", bundles_dir})
    if (::chmod(d.c_str(), 0711) != 0) return errno_status(errno, "chmod 0711 " + d);
  if (::chown(bundle.c_str(), 0, root_gid) != 0) return errno_status(errno, "chown " + bundle);
  if (::chmod(bundle.c_str(), 0710) != 0) return errno_status(errno, "chmod 0710 " + bundle);
  return ok_status();
}

void SandboxManager::finish_recovery() {
  std::vector<std::shared_ptr<Sandbox>> pending;
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& [id, s] : impl_->sandboxes)
      if (s->cp.phase == SandboxPhase::creating) pending.push_back(s);
  }
  for (const auto& s : pending) {
    std::lock_guard op(s->op);
    if (s->removed) continue;
    fault_point(FaultPoint::recovery_undoing_sandbox);
    if (Status st = impl_->destroy(*s); !st.ok())
      spdlog::error("sandbox {}: undo of a run cut short failed (left NOTREADY for stop/remove): {}", s->cp.id, st.message());
    else
      spdlog::info("sandbox {}: undid a RunPodSandbox cut short by a berthd restart", s->cp.id);
  }
}

}  // namespace berth
