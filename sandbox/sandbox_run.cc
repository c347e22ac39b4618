// SandboxManager::run: RunPodSandbox's steps in order (checkpoint, network, bundle, shm, netns,
// pod files, pause spec, pause, ready), each with a fault point and undone by destroy() on
// failure, and the functions that assemble what a step takes from the CRI config.
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "berth/atomic_file.h"
#include "berth/cgroups_path.h"
#include "berth/fault_point.h"
#include "berth/free_space.h"
#include "berth/lexical_path.h"
#include "berth/mutex.h"
#include "berth/object_id.h"
#include "berth/process_identity.h"
#include "berth/sandbox_manager.h"
#include "berth/user_namespace.h"
#include "berth/wall_clock.h"
#include "netns.h"
#include "network_setup.h"
#include "pause_launch.h"
#include "pause_spec.h"
#include "pod_mounts.h"
#include "sandbox_files.h"
#include "sandbox_state.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// The pod's record as RunPodSandbox first writes it (phase "creating"), from the CRI config.
SandboxCheckpoint new_checkpoint(const SandboxManager::Impl& impl, const v1::PodSandboxConfig& config,
                                 const std::string& handler, const std::string& id, const PodUserNamespace& userns) {
  const auto& md = config.metadata();
  const auto& ns = config.linux().security_context().namespace_options();
  const bool host_net = ns.network() == v1::NODE;
  SandboxCheckpoint cp;
  cp.id = id;
  cp.phase = SandboxPhase::creating;
  cp.name = md.name();
  cp.namespace_ = md.namespace_();
  cp.uid = md.uid();
  cp.attempt = md.attempt();
  cp.netns_path = host_net ? "" : impl.netns_dir + "/" + id;
  cp.host_network = host_net;
  cp.privileged = config.linux().security_context().privileged();
  cp.network_mode = ns.network();
  cp.pid_mode = ns.pid();
  cp.ipc_mode = ns.ipc();
  cp.cgroup_parent = config.linux().cgroup_parent();
  cp.runtime_handler = impl.opt.runtimes.resolve(handler);
  cp.hostname = host_net || config.hostname().empty() ? host_name() : config.hostname();
  cp.log_directory = lexically_normal_dir(config.log_directory());
  for (const auto& p : config.port_mappings())
    cp.port_mappings.push_back({v1::Protocol_Name(p.protocol()), p.container_port(), p.host_port(), p.host_ip()});
  cp.labels = {config.labels().begin(), config.labels().end()};
  cp.annotations = {config.annotations().begin(), config.annotations().end()};
  cp.created_at = wall_clock_ns();
  if (userns.own) {
    cp.userns_path = impl.userns_dir + "/" + id;
    cp.uid_mappings = userns.uids;
    cp.gid_mappings = userns.gids;
  }
  return cp;
}

SandboxNetworkRequest network_request(const SandboxCheckpoint& cp, const PodDns& dns) {
  return {.id = cp.id,
          .name = cp.name,
          .namespace_ = cp.namespace_,
          .uid = cp.uid,
          .netns_path = cp.netns_path,
          .port_mappings = cp.port_mappings,
          .dns = dns,
          .annotations = cp.annotations,
          .netns_ready = {}};
}

// The pod's own files and its /dev/shm belong to its root (the host id container root maps to), so
// the containers' root can write them as it could without a user namespace.
Status give_files_to_pod_root(const Sandbox& sb) {
  uint32_t uid = 0, gid = 0;
  map_to_host(sb.cp.uid_mappings, 0, &uid);
  map_to_host(sb.cp.gid_mappings, 0, &gid);
  std::vector<std::string> paths = {sb.bundle + "/resolv.conf", sb.bundle + "/hostname", sb.bundle + "/hosts"};
  if (sb.cp.ipc_mode != v1::NODE) paths.push_back(sb.shm_path);
  for (const std::string& p : paths)
    if (::chown(p.c_str(), uid, gid) != 0)
      return errno_status(errno, "give " + p + " to the pod's root (" + std::to_string(uid) + ")");
  return ok_status();
}

// resolv.conf (the host's for a pod on the node's network), hostname and hosts.
Status write_pod_files(const Sandbox& sb, const PodDns& dns) {
  for (Status s : {write_resolv_conf(sb.bundle + "/resolv.conf", sb.cp.host_network ? PodDns{} : dns),
                   write_hostname_file(sb.bundle + "/hostname", sb.cp.hostname),
                   write_hosts_file(sb.bundle + "/hosts", sb.cp.hostname)})
    if (!s.ok()) return s;
  if (!sb.cp.userns_path.empty()) return give_files_to_pod_root(sb);
  return ok_status();
}

}  // namespace

// The embedded pause starts without the runtime (two runtime execs less per pod); an image's
// pause, or a spec the launcher does not apply, goes through the runtime.
Status SandboxManager::Impl::start_pause(Sandbox& sb, const oci::Spec& spec, const std::string& handler,
                                         bool image_pause, OciRuntime& rt) {
  const std::string& id = sb.cp.id;
  Result<pid_t> launched = Status(Code::unimplemented, "an image's pause");
  const bool host_processes = opt.runtimes.features(handler).host_processes;
  if (!host_processes)
    launched = Status(Code::unimplemented, "handler " + opt.runtimes.resolve(handler) + " does not run host processes");
  if (!image_pause && host_processes) {
    fault_point(FaultPoint::run_pod_sandbox_runtime_created);
    launched = opt.runtimes.systemd_cgroup() && !opt.systemd
                   ? Status(Code::unimplemented, "the systemd cgroup driver without a systemd connection")
                   : launch_pause(opt.pause_launcher, spec, opt.systemd.get(), seccomp_programs);
    if (!launched.ok() && launched.status().code() != Code::unimplemented) return launched.status();
  }
  if (launched.ok()) {
    // For recovery, which finds the pause by it, as it would the runtime's.
    if (Status s = write_file_atomically(sb.bundle + "/pid", std::to_string(*launched), 0600, false); !s.ok()) {
      MutexLock lock(sb.mu);
      sb.pid = *launched;
      sb.pidfd = open_pidfd(*launched);
      return s;
    }
  } else {
    spdlog::debug("sandbox {}: pause through the runtime: {}", id, launched.status().message());
    sb.runtime_may_exist = true;
    if (Status s = rt.create(id, sb.bundle); !s.ok()) return s;
    fault_point(FaultPoint::run_pod_sandbox_runtime_created);
    if (Status s = rt.start(id); !s.ok()) return s;
  }
  MutexLock lock(sb.mu);
  sb.pid = launched.ok() ? *launched : read_pid_file(sb.bundle + "/pid");
  sb.pidfd = open_pidfd(sb.pid);
  return ok_status();
}

Result<std::string> SandboxManager::run(const v1::PodSandboxConfig& config, const std::string& handler) {
  // Not one a reload removed: those only stop and remove what they made.
  if (Status s = impl_->opt.runtimes.accepts_new(handler); !s.ok()) return s;
  auto rt = impl_->runtime_for(handler);
  if (!rt.ok()) return rt.status();
  const auto& ns = config.linux().security_context().namespace_options();
  auto userns = pod_user_namespace(ns, "config.linux.security_context.namespace_options");
  if (!userns.ok()) return userns.status();
  if (userns->own && !impl_->opt.user_namespaces.ok())
    return failed_precondition(
        "config.linux.security_context.namespace_options.userns_options: this node cannot give pods "
        "user namespaces of their own: " +
        impl_->opt.user_namespaces.message());
  // Before anything is made (a pod that runs out half-way only has more to undo); the pod's log
  // directory too when kubelet made it already: its containers could not start.
  for (const auto& [dir, what] : {std::pair{impl_->checkpoints_dir, "root dir"},
                                  {impl_->bundles_dir, "state dir"},
                                  {std::string(lexically_normal_dir(config.log_directory())), "log directory"}})
    if (!dir.empty() && ::access(dir.c_str(), F_OK) == 0)
      if (Status s = require_free_space(dir, what); !s.ok())
        return s.context("run pod sandbox " + config.metadata().namespace_() + "/" + config.metadata().name());
  const std::string id = new_object_id();
  auto cgroups = cgroups_path_for(config.linux().cgroup_parent(), id, impl_->opt.runtimes.systemd_cgroup());
  if (!cgroups.ok()) return cgroups.status();

  auto sb = std::make_shared<Sandbox>();
  sb->bundle = impl_->bundles_dir + "/" + id;
  sb->cgroups_path = *cgroups;
  sb->shm_path = ns.ipc() == v1::NODE ? "/dev/shm" : sb->bundle + "/shm";
  sb->cp = new_checkpoint(*impl_, config, handler, id, *userns);
  SandboxCheckpoint& cp = sb->cp;
  const PodDns dns = pod_dns(config.dns_config());

  if (Status s = impl_->names.reserve(sandbox_name_key(cp), id, "sandbox"); !s.ok()) return s;
  MutexLock op(sb->op);
  sb->runtime_may_exist = false;
  const std::string what = "run pod sandbox " + cp.namespace_ + "/" + cp.name;
  NetworkSetup network;
  auto fail = [&](const Status& s) BERTH_REQUIRES(sb->op) {
    network.abandon(id);
    if (Status undo = impl_->destroy(*sb); !undo.ok()) {
      // Listed NOTREADY from now on, so Stop/Remove (or the next start's recovery) finish it.
      spdlog::error("sandbox {}: undo of a failed run left work for stop/remove: {}", id, undo.message());
      MutexLock lock(impl_->mu);
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
  if (!cp.host_network && impl_->opt.network) network.start(*impl_->opt.network, network_request(cp, dns));
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
  if (userns->own && cp.host_network) {
    // The node's network namespace, owned by the node's user namespace: the pod's root holds no
    // capability over it (it binds and connects as an unprivileged user of the node would).
    if (Status s = create_pinned_user_ns(cp.uid_mappings, cp.gid_mappings, cp.userns_path); !s.ok()) return fail(s);
  } else if (userns->own) {
    if (Status s = create_pinned_userns_netns(cp.uid_mappings, cp.gid_mappings, cp.userns_path, cp.netns_path); !s.ok())
      return fail(s);
  } else if (!cp.host_network) {
    if (auto pin = create_pinned_netns(impl_->netns_dir, id); !pin.ok()) return fail(pin.status());
  }
  network.netns_made(ok_status());
  fault_point(FaultPoint::run_pod_sandbox_netns_pinned);
  if (Status s = write_pod_files(*sb, dns); !s.ok()) return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_files_written);

  PauseSpecInputs spec_in{.rootfs = impl_->pause_rootfs,
                          .netns_path = cp.netns_path,
                          .cgroups_path = sb->cgroups_path,
                          .shm_path = sb->shm_path,
                          .oom_score_adj = impl_->oom_score_adj(-998),
                          .cgroup_v2 = host_cgroup_v2(),
                          .userns_path = cp.userns_path,
                          .uids = cp.uid_mappings,
                          .gids = cp.gid_mappings};
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
  if (Status s = write_file_atomically(sb->bundle + "/config.json", oci::to_json(*spec).dump(), 0600, false); !s.ok())
    return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_spec_written);

  if (Status s =
          impl_->cgroup_parents->note_missing(cgroup_dir_of(sb->cgroups_path, impl_->opt.runtimes.systemd_cgroup()));
      !s.ok())
    return fail(s);
  if (Status s = impl_->start_pause(*sb, *spec, handler, image->has_value(), *rt); !s.ok()) return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_runtime_started);
  auto ips = network.finish();
  if (!ips.ok()) return fail(ips.status());
  {
    MutexLock lock(sb->mu);
    sb->ips = *ips;
  }
  fault_point(FaultPoint::run_pod_sandbox_network_ready);
  {
    MutexLock lock(sb->mu);
    cp.phase = SandboxPhase::ready;
  }
  if (Status s = write_checkpoint(impl_->checkpoints_dir, cp, false); !s.ok()) return fail(s);
  fault_point(FaultPoint::run_pod_sandbox_ready_recorded);
  MutexLock lock(impl_->mu);
  impl_->sandboxes[id] = sb;
  return id;
}

}  // namespace berth
