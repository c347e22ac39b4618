// ContainerManager::create: the container's steps in order (name, dirs, rootfs, spec, mounts, log
// file, record, index), each undone on failure and each with a fault point, and the functions
// that assemble what a step takes from the pod, the image and the request.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "berth/apparmor_default.h"
#include "berth/atomic_file.h"
#include "berth/cdi.h"
#include "berth/cgroups_path.h"
#include "berth/container_manager.h"
#include "berth/free_space.h"
#include "berth/container_rootfs.h"
#include "berth/container_spec.h"
#include "berth/fault_point.h"
#include "berth/file_text.h"
#include "berth/file_tree.h"
#include "berth/image_manager.h"
#include "berth/mutex.h"
#include "berth/object_id.h"
#include "berth/open_beneath.h"
#include "berth/own_privileges.h"
#include "berth/prepared_mounts.h"
#include "berth/rollback.h"
#include "berth/sandbox_manager.h"
#include "berth/wall_clock.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

void set_container_paths(const ContainerManager::Impl& impl, const std::string& id, Container& c) {
  c.bundle = impl.containers_state + "/" + id;
  c.rootfs = c.bundle + "/rootfs";
  c.upper = impl.layers_dir + "/" + id + "/upper";
  c.work = impl.layers_dir + "/" + id + "/work";
  c.socket = impl.monitor_socket(id);
  c.exit_file = c.bundle + "/exit.json";
}

// The container joins its pod's user namespace (kubelet repeats the pod's on every container).
// When the pod has its own, its rootfs is mapped for the pod's root, who alone (as the runtime
// does) reaches the bundle past its owner (0710, root:<the pod root's group>).
Result<std::optional<RootfsIdmap>> pod_rootfs_idmap(const ContainerManager::Impl& impl,
                                                    const v1::ContainerConfig& config, const SandboxInfo& pod,
                                                    const Container& c, UniqueFd& userns_fd) {
  const auto& ns = config.linux().security_context().namespace_options();
  auto userns = pod_user_namespace(ns, "config.linux.security_context.namespace_options");
  if (!userns.ok()) return userns.status();
  if (ns.has_userns_options() && !(*userns == pod.userns))
    return invalid_argument("config.linux.security_context.namespace_options.userns_options: differs from pod " +
                            pod.id + "'s; a container joins its pod's user namespace");
  if (!pod.userns.own) return std::optional<RootfsIdmap>();
  userns_fd = UniqueFd(::open(pod.userns_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!userns_fd) return errno_status(errno, "open the pod's user namespace " + pod.userns_path);
  RootfsIdmap idmap{userns_fd.get(), c.bundle + "/idmap"};
  map_to_host(pod.userns.uids, 0, &idmap.root_uid);
  map_to_host(pod.userns.gids, 0, &idmap.root_gid);
  if (::chmod(impl.containers_state.c_str(), 0711) != 0)
    return errno_status(errno, "chmod 0711 " + impl.containers_state);
  if (::chown(c.bundle.c_str(), 0, idmap.root_gid) != 0) return errno_status(errno, "chown " + c.bundle);
  if (::chmod(c.bundle.c_str(), 0710) != 0) return errno_status(errno, "chmod 0710 " + c.bundle);
  return std::optional<RootfsIdmap>(idmap);
}

// The init pid of the running container of the same pod that a TARGET pid namespace names; 0
// when there is none (the spec builder then refuses the request).
Result<int> target_container_pid(ContainerManager::Impl& impl, const v1::ContainerConfig& config,
                                 const std::string& pod_id) {
  const auto& ns = config.linux().security_context().namespace_options();
  if (ns.pid() != v1::TARGET) return 0;
  Status ambiguous;
  auto target = impl.find(ns.target_id(), &ambiguous);
  if (ambiguous.code() == Code::invalid_argument)
    return invalid_argument("config.linux.security_context.namespace_options.target_id: " + ambiguous.message());
  if (!target) return 0;
  MutexLock lock(target->mu);
  bool usable = target->rec.state == v1::CONTAINER_RUNNING && target->sandbox_id == pod_id;
  return usable ? target->rec.pid : 0;
}

PodForContainer pod_for_container(const SandboxInfo& pod) {
  return {pod.id,         pod.pid,         pod.netns_path,  pod.host_network, pod.host_ipc,   pod.host_pid,
          pod.bundle_dir, pod.shm_path,    pod.hostname,    pod.name,         pod.namespace_, pod.uid,
          pod.privileged, pod.userns_path, pod.userns.uids, pod.userns.gids};
}

ImageForContainer image_for_container(const v1::ContainerConfig& config, const ImageRecord& image) {
  return {config.image().image(),
          {image.config.entrypoint, image.config.cmd, image.config.env, image.config.working_dir, image.config.user},
          image.config.stop_signal};
}

// What the spec builder takes from the node and from the steps before it.
Result<ContainerSpecInputs> spec_inputs(ContainerManager::Impl& impl, const v1::ContainerConfig& config,
                                        const SandboxInfo& pod, const Container& c, const std::string& id,
                                        int target_pid) {
  ContainerSpecInputs in{
      .id = id,
      .rootfs = c.rootfs,
      .cgroups_path = c.cgroups_path,
      .mountinfo = read_text_file("/proc/self/mountinfo"),
      .min_oom_score_adj = own_privileges().oom_floor(),
      .target_pid = target_pid,
      .host_apparmor = host_apparmor_enabled(),
      .cgroup_v2 = host_cgroup_v2(),
      .mounts = {recursive_read_only_mode(impl.opt.runtimes.features(pod.runtime_handler)), c.bundle + "/mounts",
                 kernel_has_mount_setattr(), pod.userns.own ? pod.userns.uids : std::vector<IdMapping>{},
                 pod.userns.own ? pod.userns.gids : std::vector<IdMapping>{}}};
  {
    MutexLock lock(impl.mu);
    in.rlimits = impl.process_defaults.rlimits;
    in.device_ownership_from_security_context = impl.process_defaults.device_ownership_from_security_context;
  }
  if (in.host_apparmor && !config.linux().security_context().privileged()) {
    auto profile = ensure_apparmor_default_profile(impl.opt.state_dir);
    if (!profile.ok()) return profile.status();
    in.default_apparmor_profile = *profile;
  }
  return in;
}

// The image volumes the config's mounts name, attached for this container: their sources by mount.
Status attach_image_volumes(ContainerManager::Impl& impl, const v1::ContainerConfig& config, const std::string& pod_id,
                            const std::string& id, const std::optional<VolumeIdmap>& idmap,
                            std::map<int, std::string>& sources) {
  for (int i = 0; i < config.mounts_size(); ++i) {
    const auto& m = config.mounts(i);
    if (!m.has_image()) continue;
    auto source = impl.volumes->attach(pod_id, id, m.image().image(), m.image_sub_path(),
                                       "config.mounts[" + std::to_string(i) + "]", idmap ? &*idmap : nullptr);
    if (!source.ok()) return source.status();
    sources[i] = *source;
  }
  return ok_status();
}

Status apply_cdi_devices(CdiRegistry* cdi, const v1::ContainerConfig& config, oci::Spec& spec) {
  // Device plugins that predate the field still ask through annotations; both count, as in
  // containerd and CRI-O (a device named in both is applied once).
  auto annotated = cdi_annotation_devices({config.annotations().begin(), config.annotations().end()});
  if (!annotated.ok()) return annotated.status().context("config.annotations");
  if (config.cdi_devices_size() == 0 && annotated->empty()) return ok_status();
  const char* field = config.cdi_devices_size() > 0 ? "config.CDI_devices" : "config.annotations (cdi.k8s.io/*)";
  if (!cdi) return invalid_argument(std::string(field) + ": CDI is not configured in this berthd");
  std::vector<std::string> names;
  for (const auto& d : config.cdi_devices()) names.push_back(d.name());
  names.insert(names.end(), annotated->begin(), annotated->end());  // resolve() counts a repeat once
  auto edits = cdi->resolve(names);
  if (!edits.ok()) return edits.status().context(field);
  return apply_cdi_edits(spec, *edits).context(field);
}

// The container's log file, made beneath the pod's log directory and following no symlink: one
// planted there (the directory is kubelet's and log agents') must not turn the container's output
// into a write to a host file. "" when the pod or the config names none.
Result<std::string> create_log_file(const SandboxInfo& pod, const v1::ContainerConfig& config) {
  if (pod.log_directory.empty() || config.log_path().empty()) return std::string();
  std::string log_path = pod.log_directory + "/" + config.log_path();
  std::error_code ec;
  std::filesystem::create_directories(pod.log_directory, ec);
  int fd = open_beneath(pod.log_directory.c_str(), config.log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0640);
  if (fd < 0)
    return errno_status(-fd,
                        "config.log_path: create log file " + log_path +
                            (-fd == ELOOP || -fd == EXDEV ? " (a symlink on the way is not followed)" : ""),
                        -fd == ENOSPC || -fd == EDQUOT ? Code::resource_exhausted : Code::invalid_argument);
  ::close(fd);
  return log_path;
}

ContainerRecord new_record(const std::string& id, const SandboxInfo& pod, const v1::ContainerConfig& config,
                           const ImageRecord& image, const ContainerSpec& spec, std::string log_path,
                           nlohmann::json config_json) {
  ContainerRecord r;
  r.id = id;
  r.sandbox_id = pod.id;
  r.name = config.metadata().name();
  r.attempt = config.metadata().attempt();
  r.image_id = image.id;
  r.image_ref = image.repo_digests.empty() ? image.id : image.repo_digests.front();
  r.stop_signal = image.config.stop_signal;
  r.runtime_handler = pod.runtime_handler;
  r.log_path = std::move(log_path);
  r.config = std::move(config_json);
  r.state = v1::CONTAINER_CREATED;
  r.created_at = wall_clock_ns();
  r.uid = spec.user.uid;
  r.gid = spec.user.gid;
  r.additional_gids = spec.user.additional_gids;
  return r;
}

// The checkpointed container's log lines at the head of the new log file (none: nothing to do).
Status carry_log(const std::string& from, const std::string& to) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!in) return ok_status();
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
  if (!out) return errno_status(errno, "restore: open the log " + to);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(in.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, "restore: read the checkpoint's log");
    if (n == 0) return ok_status();
    if (::write(out.get(), buf, static_cast<size_t>(n)) != n)
      return errno_status(errno, "restore: write the log " + to);
  }
}

// A restore's writable layer, made before the overlay is mounted over it: the checkpoint's diff
// and deletions (berth-checkpoint-archive, confined), the CRIU images beside it, and the old log's
// lines in the new log file, as containerd carries them.
// Returns where the CRIU images went (the record's restore_from).
Result<std::string> restore_writable_layer(const ContainerManager::Impl& impl, const RestoreImport& restore,
                                           const Container& c) {
  std::error_code ec;
  std::filesystem::create_directories(c.upper, ec);
  if (ec) return internal_error("restore: mkdir " + c.upper + ": " + ec.message());
  auto present = [&](const char* name) {
    std::string p = restore.dir + "/" + name;
    return ::access(p.c_str(), F_OK) == 0 ? p : std::string("-");
  };
  if (Status s = run_archive_helper(impl.opt.checkpoint_archive_helper,
                                    {"apply", present("rootfs-diff.tar"), present("deleted.files"), c.upper},
                                    std::chrono::minutes(30), "config.image.image: the checkpoint's writable layer");
      !s.ok())
    return s;
  const std::string images = std::filesystem::path(c.upper).parent_path().string() + "/checkpoint";
  if (::rename((restore.dir + "/checkpoint").c_str(), images.c_str()) != 0)
    return errno_status(errno, "restore: move the CRIU images to " + images);
  return images;
}

}  // namespace

Result<std::string> ContainerManager::create(const std::string& sandbox_id, const v1::ContainerConfig& config) {
  const std::string& image = config.image().image();
  // A checkpoint archive, or an image holding one: unpacked (its dir goes whatever comes of it),
  // then the container is made from the image it names, as the request asks for everything else.
  Result<RestoreImport> imp = invalid_argument("");
  if (!image.empty() && image.front() == '/') {
    imp = import_checkpoint(*impl_, image);
  } else {
    auto found = impl_->opt.images->find(image);
    if (!found || !is_checkpoint_image(impl_->opt.images->annotations(*found)))
      return create_container(sandbox_id, config, nullptr);
    imp = import_checkpoint_image(*impl_, image, impl_->opt.images->snapshot_dirs(*found));
  }
  if (!imp.ok()) return imp.status().context("create container " + config.metadata().name() + " in pod " + sandbox_id);
  struct Imported {
    std::string dir;
    ~Imported() { (void)remove_tree(dir); }
  } imported{imp->dir};
  v1::ContainerConfig from_image = config;
  from_image.mutable_image()->set_image(imp->base_image);
  (*from_image.mutable_annotations())["io.berth.restored-from"] = image;
  return create_container(sandbox_id, from_image, &*imp);
}

Result<std::string> ContainerManager::create_container(const std::string& sandbox_id, const v1::ContainerConfig& config,
                                                       const RestoreImport* restore) {
  // Held until the container is in the index: a pod being stopped or removed waits for it.
  auto lease = impl_->opt.pods->lease(sandbox_id);
  if (!lease.ok()) return lease.status();
  const SandboxInfo& pod = lease->info;
  // Held from here: the hold goes with the handle on failure and with the container otherwise.
  auto held = impl_->opt.images->acquire(config.image().image());
  if (!held.ok())
    return not_found("image " + config.image().image() + " not found (pull it first)" +
                     (restore ? "; the checkpoint builds on it" : ""));
  if (restore && pod.userns.own)
    return invalid_argument("config.image.image: pod " + pod.id +
                            " has a user namespace of its own; berth does not restore checkpoints into one");
  const ImageRecord& image = held->record();
  if (auto rt = impl_->runtime_for(pod.runtime_handler); !rt.ok()) return rt.status();
  // Before anything is made: a create that runs out half-way only has more to undo.
  for (const auto& [dir, what] : {std::pair{impl_->containers_state, "state dir"},
                                  {impl_->layers_dir, "root dir"},
                                  {pod.log_directory, "log directory"}})
    if (!dir.empty() && ::access(dir.c_str(), F_OK) == 0)
      if (Status s = require_free_space(dir, what); !s.ok())
        return s.context("create container " + config.metadata().name() + " in pod " + pod.id);

  const std::string id = new_object_id();
  const std::string key = name_key(pod.id, config.metadata());
  if (Status s = impl_->names.reserve(key, id, "container"); !s.ok()) return s;
  Rollback undo("container " + id);
  undo.add("name", [&] {
    impl_->names.release(key, id);
    return ok_status();
  });
  fault_point(FaultPoint::create_container_name_reserved);
  auto fail = [&](const Status& s) {
    Status undone = undo.run();  // each failed step is also logged with the container and the step
    Status out = s.context("create container " + config.metadata().name() + " in pod " + pod.id);
    if (undone.ok()) return out;
    return Status(out.code(), out.message() + " (" + undone.message() + "; left for the next start's sweep)");
  };

  auto c = std::make_shared<Container>();
  c->id = id;
  c->sandbox_id = pod.id;
  c->runtime_handler = pod.runtime_handler;
  set_container_paths(*impl_, id, *c);
  c->stop_signal = stop_signal_of(config, image.config.stop_signal);
  if (::mkdir(c->bundle.c_str(), 0700) != 0) return fail(errno_status(errno, "mkdir " + c->bundle));
  undo.add("dirs", [this, id] {
    // Left, on failure, for the leftover sweep at the next start, which removes dirs no record owns.
    Status first;
    for (const std::string& dir : {impl_->containers_state + "/" + id, impl_->layers_dir + "/" + id})
      if (Status s = remove_tree(dir); !s.ok() && first.ok()) first = s;
    return first;
  });
  fault_point(FaultPoint::create_container_dirs_made);

  UniqueFd userns_fd;
  auto idmap = pod_rootfs_idmap(*impl_, config, pod, *c, userns_fd);
  if (!idmap.ok()) return fail(idmap.status());
  std::string restore_from;
  if (restore) {
    auto images = restore_writable_layer(*impl_, *restore, *c);
    if (!images.ok()) return fail(images.status());
    restore_from = std::move(*images);
    fault_point(FaultPoint::restore_layer_applied);
  }
  if (Status s = mount_container_rootfs(impl_->opt.images->snapshot_dirs(image), c->upper, c->work, c->rootfs,
                                        *idmap ? &**idmap : nullptr);
      !s.ok())
    return fail(s);
  undo.add("rootfs", [root = c->rootfs] { return unmount_container_rootfs(root); });
  fault_point(FaultPoint::create_container_rootfs_mounted);

  // Beside the pause, under the pod's cgroup parent (CRI has no per-container parent).
  auto cgroups = cgroups_path_for(pod.cgroup_parent, id, impl_->opt.runtimes.systemd_cgroup());
  if (!cgroups.ok()) return fail(cgroups.status().context("config"));
  c->cgroups_path = *cgroups;
  auto target_pid = target_container_pid(*impl_, config, pod.id);
  if (!target_pid.ok()) return fail(target_pid.status());
  auto in = spec_inputs(*impl_, config, pod, *c, id, *target_pid);
  if (!in.ok()) return fail(in.status());
  undo.add("image volumes", [this, id] { return impl_->volumes->detach(id); });
  std::optional<VolumeIdmap> volume_idmap;
  if (*idmap) volume_idmap = VolumeIdmap{userns_fd.get(), (*idmap)->root_gid};
  if (Status s = attach_image_volumes(*impl_, config, pod.id, id, volume_idmap, in->image_sources); !s.ok())
    return fail(s);
  fault_point(FaultPoint::create_container_image_volumes_mounted);

  auto spec = build_container_spec(config, pod_for_container(pod), image_for_container(config, image), *in);
  if (!spec.ok()) return fail(spec.status());
  if (Status s = apply_cdi_devices(impl_->opt.cdi, config, spec->spec); !s.ok()) return fail(s);
  if (impl_->opt.adjust_spec) {
    if (Status s = impl_->opt.adjust_spec(pod, config, id, spec->spec); !s.ok()) return fail(s);
    // A plugin may have moved the container's cgroup: the record follows the spec.
    if (spec->spec.linux && !spec->spec.linux->cgroups_path.empty()) c->cgroups_path = spec->spec.linux->cgroups_path;
  }
  if (restore && host_cgroup_v2()) {
    // runc's restore names the new cgroup to CRIU only on v1: on v2 CRIU would put the processes
    // (and charge their memory) in the checkpointed container's cgroup, made again if gone. A CRIU
    // config file, which runc hands CRIU when the spec names it, gives it the new one as the root.
    const std::string conf = c->bundle + "/criu.conf";
    if (Status s = write_file_atomically(
            conf, "cgroup-root " + cgroup_dir_of(c->cgroups_path, impl_->opt.runtimes.systemd_cgroup()) + "\n", 0600,
            false);
        !s.ok())
      return fail(s);
    spec->spec.annotations["org.criu.config"] = conf;
  }
  undo.add("prepared mounts", [dir = in->mounts.prepared_dir] { return release_prepared_mounts(dir); });
  if (Status s = prepare_mounts(spec->prepared_mounts, {pod.userns_path, pod.userns.uids, pod.userns.gids}); !s.ok())
    return fail(s);
  fault_point(FaultPoint::create_container_mounts_prepared);
  if (Status s = write_file_atomically(c->bundle + "/config.json", oci::to_json(spec->spec).dump(), 0600, false);
      !s.ok())
    return fail(s);
  fault_point(FaultPoint::create_container_spec_written);

  auto log_path = create_log_file(pod, config);
  if (!log_path.ok()) return fail(log_path.status());
  if (restore && !log_path->empty())
    if (Status s = carry_log(restore->dir + "/container.log", *log_path); !s.ok()) return fail(s);
  fault_point(FaultPoint::create_container_log_created);
  auto config_json = config_to_json(config);
  if (!config_json.ok()) return fail(config_json.status());
  {
    // Not shared yet; taken so that every write of what they guard is under them.
    MutexLock op(c->op);
    MutexLock lock(c->mu);
    c->config = config;
    c->rec = new_record(id, pod, config, image, *spec, std::move(*log_path), std::move(*config_json));
    c->rec.restore_from = restore_from;
    c->runtime_may_exist = false;
    auto poststop = spec->spec.hooks.find("poststop");
    c->exit_delete_in_process = impl_->opt.runtimes.features(pod.runtime_handler).runtime == "runc" &&
                                (poststop == spec->spec.hooks.end() || poststop->second.empty());
    if (Status s = impl_->save(*c); !s.ok()) return fail(s);
  }
  fault_point(FaultPoint::create_container_record_written);
  {
    MutexLock lock(impl_->mu);
    impl_->containers[id] = c;
  }
  undo.dismiss();
  (void)std::move(*held).keep();  // released by the container's removal
  impl_->emit(*c, v1::CONTAINER_CREATED_EVENT);
  return id;
}

}  // namespace berth
