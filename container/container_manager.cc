// Container lifecycle: create (rootfs, spec, record, log file) and start (the monitor runs the
// runtime's `run --detach`: one runtime process for create and start). Both hold a lease on the
// pod, so no container is made or started in a pod being stopped or removed. Create keeps a
// rollback list and undoes every finished step when a later one fails; a crash before its record
// is written leaves only files under berth's own dirs, which recovery removes.
#include "berth/own_privileges.h"
#include "berth/container_manager.h"
#include "berth/file_text.h"
#include "berth/file_tree.h"
#include "berth/object_id.h"
#include "berth/private_dir.h"
#include "berth/open_beneath.h"
#include "berth/rollback.h"
#include "berth/wall_clock.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <optional>
#include <filesystem>
#include <sstream>

#include <nettle/base64.h>
#include <spdlog/spdlog.h>

#include "berth/apparmor_default.h"
#include "berth/cdi.h"
#include "berth/atomic_file.h"
#include "berth/cgroups_path.h"
#include "berth/container_rootfs.h"
#include "berth/container_spec.h"
#include "berth/fault_point.h"
#include "berth/image_manager.h"
#include "berth/prepared_mounts.h"
#include "berth/sandbox_manager.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

bool config_from_json(const nlohmann::json& j, v1::ContainerConfig* config) {
  if (!j.is_string()) return false;
  const std::string& text = j.get_ref<const std::string&>();
  std::string bin(BASE64_DECODE_LENGTH(text.size()), '\0');
  size_t n = bin.size();
  base64_decode_ctx ctx;
  base64_decode_init(&ctx);
  if (!base64_decode_update(&ctx, &n, reinterpret_cast<uint8_t*>(bin.data()), text.size(), text.data()) || !base64_decode_final(&ctx))
    return false;
  bin.resize(n);
  return config->ParseFromString(bin);
}

int stop_signal_of(const v1::ContainerConfig& c, const std::string& image_stop_signal) {
  if (c.stop_signal() != 0) {
    if (int n = signal_number(v1::Signal_Name(c.stop_signal()))) return n;
  }
  if (int n = signal_number(image_stop_signal)) return n;
  return 15;
}

// The config as serialized protobuf (the generated CRI code is protobuf-lite: no JSON printing),
// base64 in the record.
Result<nlohmann::json> config_to_json(const v1::ContainerConfig& config) {
  std::string bin;
  if (!config.SerializeToString(&bin)) return internal_error("encode container config");
  std::string text(BASE64_ENCODE_RAW_LENGTH(bin.size()), '\0');
  base64_encode_raw(text.data(), bin.size(), reinterpret_cast<const uint8_t*>(bin.data()));
  return nlohmann::json(text);
}

std::string name_key(const std::string& sandbox_id, const v1::ContainerMetadata& m) {
  return sandbox_id + "_" + m.name() + "_" + std::to_string(m.attempt());
}

Result<OciRuntime> ContainerManager::Impl::runtime_for(const std::string& handler) const {
  return opt.runtimes.runtime_for(handler);
}

std::shared_ptr<Container> ContainerManager::Impl::find(const std::string& id_or_prefix, Status* err) {
  std::lock_guard lock(mu);
  return find_by_id_or_prefix(containers, id_or_prefix, "container", "container_id", err);
}

void ContainerManager::Impl::emit(const Container& c, v1::ContainerEventType type) const {
  if (opt.events) opt.events->container_changed(c.rec.id, c.rec.sandbox_id, type);
}

Status ContainerManager::Impl::save(Container& c) const { return write_container_record(records_dir, c.rec); }

ContainerManager::ContainerManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ContainerManager::~ContainerManager() {
  // The watcher's thread calls into impl_ and posts to the worker: stop both before the rest goes.
  if (impl_) impl_->watcher.reset();
  if (impl_) impl_->exited_deletes.reset();
}

Result<std::unique_ptr<ContainerManager>> ContainerManager::open(ContainerManagerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->opt = std::move(options);
  impl->containers_state = impl->opt.state_dir + "/containers";
  // Monitor sockets live apart from the bundles: a unix socket path must stay under 108 bytes.
  impl->monitors_dir = impl->opt.state_dir + "/monitors";
  if (impl->monitor_socket(std::string(64, '0')).size() >= 108)
    return invalid_argument("containers: the state dir " + impl->opt.state_dir + " is too long for monitor sockets under it (" +
                            impl->monitors_dir + "/<32 hex>.sock must stay under 108 bytes)");
  impl->layers_dir = impl->opt.root_dir + "/containers";
  impl->records_dir = impl->opt.root_dir + "/container-records";
  impl->quarantine_dir = impl->opt.root_dir + "/container-records-quarantine";
  std::error_code ec;
  for (const auto& d : {impl->containers_state, impl->monitors_dir, impl->layers_dir, impl->records_dir})
    if (Status s = make_private_dir(d); !s.ok()) return s.context("containers");
  if (Status s = make_private_dir(impl->opt.state_dir + "/image-volumes"); !s.ok()) return s.context("containers");
  impl->volumes = std::make_unique<ImageVolumes>(impl->opt.state_dir + "/image-volumes", *impl->opt.images);
  auto helper = ExecHelperBinary::load(impl->opt.exec_helper);
  if (!helper.ok()) return helper.status().context("containers");
  impl->exec_helper = std::move(*helper);
  Impl* raw = impl.get();
  impl->exited_deletes = std::make_unique<SerialWorker>();
  impl->watcher = std::make_unique<MonitorWatcher>([raw](const std::string& id, const ExitInfo& e) { raw->on_exit(id, e); });

  impl->recover();
  return std::unique_ptr<ContainerManager>(new ContainerManager(std::move(impl)));
}

// The CDI devices a device plugin or DRA driver asked for, applied to the spec (device nodes with
// their cgroup rules, mounts, env, hooks, groups): every one, or the create fails naming it.
static Status apply_cdi_devices(CdiRegistry* cdi, const v1::ContainerConfig& config, nlohmann::json& spec) {
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

Result<std::string> ContainerManager::create(const std::string& sandbox_id, const v1::ContainerConfig& config) {
  const auto& md = config.metadata();
  if (md.name().empty()) return invalid_argument("config.metadata.name: must not be empty");
  if (config.image().image().empty()) return invalid_argument("config.image.image: must not be empty");
  if (config.log_path().rfind('/', 0) == 0) return invalid_argument("config.log_path: '" + config.log_path() + "' must be relative to the pod's log_directory");
  // Held until the container is in the index: a pod being stopped or removed waits for it.
  auto lease = impl_->opt.pods->lease(sandbox_id);
  if (!lease.ok()) return lease.status();
  const SandboxInfo* pod = &lease->info;
  // Held from here: the hold goes with the handle on failure and with the container otherwise.
  auto held = impl_->opt.images->acquire(config.image().image());
  if (!held.ok()) return not_found("image " + config.image().image() + " not found (pull it first)");
  const ImageRecord* image = &held->record();
  auto rt = impl_->runtime_for(pod->runtime_handler);
  if (!rt.ok()) return rt.status();

  std::string id = new_object_id();
  std::string key = name_key(pod->id, md);
  if (Status s = impl_->names.reserve(key, id, "container"); !s.ok()) return s;
  Rollback undo("container " + id);
  undo.add("name", [&] {
    impl_->names.release(key, id);
    return ok_status();
  });
  fault_point(FaultPoint::create_container_name_reserved);
  auto fail = [&](const Status& s) {
    Status undone = undo.run();  // each failed step is also logged with the container and the step
    Status out = s.context("create container " + md.name() + " in pod " + pod->id);
    if (undone.ok()) return out;
    return Status(out.code(), out.message() + " (" + undone.message() + "; left for the next start's sweep)");
  };

  auto c = std::make_shared<Container>();
  c->config = config;
  c->bundle = impl_->containers_state + "/" + id;
  c->rootfs = c->bundle + "/rootfs";
  c->upper = impl_->layers_dir + "/" + id + "/upper";
  c->work = impl_->layers_dir + "/" + id + "/work";
  c->socket = impl_->monitor_socket(id);
  c->exit_file = c->bundle + "/exit.json";
  c->stop_signal = stop_signal_of(config, image->config.stop_signal);
  std::error_code ec;
  if (::mkdir(c->bundle.c_str(), 0700) != 0) return fail(errno_status(errno, "mkdir " + c->bundle));
  undo.add("dirs", [this, id] {
    // Left, on failure, for the leftover sweep at the next start, which removes dirs no record owns.
    Status first;
    for (const std::string& dir : {impl_->containers_state + "/" + id, impl_->layers_dir + "/" + id})
      if (Status s = remove_tree(dir); !s.ok() && first.ok()) first = s;
    return first;
  });
  fault_point(FaultPoint::create_container_dirs_made);
  // kubelet repeats the pod's user namespace on every container; a container joins its pod's.
  auto userns = pod_user_namespace(config.linux().security_context().namespace_options(), "config.linux.security_context.namespace_options");
  if (!userns.ok()) return fail(userns.status());
  if (config.linux().security_context().namespace_options().has_userns_options() && !(*userns == pod->userns))
    return fail(invalid_argument("config.linux.security_context.namespace_options.userns_options: differs from pod " + pod->id +
                                 "'s; a container joins its pod's user namespace"));
  std::optional<RootfsIdmap> idmap;
  UniqueFd userns_fd;
  if (pod->userns.own) {
    userns_fd = UniqueFd(::open(pod->userns_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!userns_fd) return fail(errno_status(errno, "open the pod's user namespace " + pod->userns_path));
    idmap = RootfsIdmap{userns_fd.get(), c->bundle + "/idmap"};
    map_to_host(pod->userns.uids, 0, &idmap->root_uid);
    map_to_host(pod->userns.gids, 0, &idmap->root_gid);
    // The runtime reaches the rootfs and the volume copies as the pod's root (see SandboxManager's
    // open_path_to_pod_root); nobody else on the node gets past the bundle (0710, root:<group>).
    if (::chmod(impl_->containers_state.c_str(), 0711) != 0) return fail(errno_status(errno, "chmod 0711 " + impl_->containers_state));
    if (::chown(c->bundle.c_str(), 0, idmap->root_gid) != 0) return fail(errno_status(errno, "chown " + c->bundle));
    if (::chmod(c->bundle.c_str(), 0710) != 0) return fail(errno_status(errno, "chmod 0710 " + c->bundle));
  }
  if (Status s = mount_container_rootfs(impl_->opt.images->snapshot_dirs(*image), c->upper, c->work, c->rootfs, idmap ? &*idmap : nullptr);
      !s.ok())
    return fail(s);
  undo.add("rootfs", [root = c->rootfs] { return unmount_container_rootfs(root); });
  fault_point(FaultPoint::create_container_rootfs_mounted);

  // Beside the pause, under the pod's cgroup parent (CRI has no per-container parent).
  auto cgroups = cgroups_path_for(pod->cgroup_parent, id, impl_->opt.runtimes.systemd_cgroup());
  if (!cgroups.ok()) return fail(cgroups.status().context("config"));
  c->cgroups_path = *cgroups;
  int target_pid = 0;
  if (config.linux().security_context().namespace_options().pid() == v1::TARGET) {
    Status ambiguous;
    auto target = impl_->find(config.linux().security_context().namespace_options().target_id(), &ambiguous);
    if (ambiguous.code() == Code::invalid_argument)
      return fail(invalid_argument("config.linux.security_context.namespace_options.target_id: " + ambiguous.message()));
    if (target && target->state() == v1::CONTAINER_RUNNING && target->rec.sandbox_id == pod->id) {
      std::lock_guard lock(target->mu);
      target_pid = target->rec.pid;
    }
  }
  PodForContainer pfc{pod->id, pod->pid, pod->netns_path, pod->host_network, pod->host_ipc, pod->host_pid, pod->bundle_dir,
                      pod->shm_path, pod->hostname, pod->name, pod->namespace_, pod->uid, pod->privileged,
                      pod->userns_path, pod->userns.uids, pod->userns.gids};
  ImageForContainer ifc{config.image().image(),
                        {image->config.entrypoint, image->config.cmd, image->config.env, image->config.working_dir, image->config.user},
                        image->config.stop_signal};
  ContainerSpecInputs in{.id = id, .rootfs = c->rootfs, .cgroups_path = c->cgroups_path, .mountinfo = read_text_file("/proc/self/mountinfo"),
                         .min_oom_score_adj = own_privileges().oom_floor(), .target_pid = target_pid,
                         .host_apparmor = host_apparmor_enabled(), .cgroup_v2 = host_cgroup_v2(),
                         .mounts = {recursive_read_only_mode(impl_->opt.runtimes.features(pod->runtime_handler)), c->bundle + "/mounts",
                                    kernel_has_mount_setattr(), pod->userns.own ? pod->userns.uids : std::vector<IdMapping>{},
                                    pod->userns.own ? pod->userns.gids : std::vector<IdMapping>{}}};
  if (rlimit nofile{}; getrlimit(RLIMIT_NOFILE, &nofile) == 0) in.nofile = nofile.rlim_max;
  if (in.host_apparmor && !config.linux().security_context().privileged()) {
    auto profile = ensure_apparmor_default_profile(impl_->opt.state_dir);
    if (!profile.ok()) return fail(profile.status());
    in.default_apparmor_profile = *profile;
  }
  undo.add("image volumes", [this, id] { return impl_->volumes->detach(id); });
  std::optional<VolumeIdmap> volume_idmap;
  if (idmap) volume_idmap = VolumeIdmap{userns_fd.get(), idmap->root_gid};
  for (int i = 0; i < config.mounts_size(); ++i) {
    const auto& m = config.mounts(i);
    if (!m.has_image()) continue;
    auto source = impl_->volumes->attach(pod->id, id, m.image().image(), m.image_sub_path(), "config.mounts[" + std::to_string(i) + "]",
                                         volume_idmap ? &*volume_idmap : nullptr);
    if (!source.ok()) return fail(source.status());
    in.image_sources[i] = *source;
  }
  fault_point(FaultPoint::create_container_image_volumes_mounted);
  auto spec = build_container_spec(config, pfc, ifc, in);
  if (!spec.ok()) return fail(spec.status());
  if (Status s = apply_cdi_devices(impl_->opt.cdi, config, spec->spec); !s.ok()) return fail(s);
  undo.add("prepared mounts", [dir = in.mounts.prepared_dir] { return release_prepared_mounts(dir); });
  if (Status s = prepare_mounts(spec->prepared_mounts, {pod->userns_path, pod->userns.uids, pod->userns.gids}); !s.ok())
    return fail(s);
  fault_point(FaultPoint::create_container_mounts_prepared);
  if (Status s = write_file_atomically(c->bundle + "/config.json", spec->spec.dump(), 0600, false); !s.ok()) return fail(s);
  fault_point(FaultPoint::create_container_spec_written);

  std::string log_path;
  if (!pod->log_directory.empty() && !config.log_path().empty()) {
    log_path = pod->log_directory + "/" + config.log_path();
    fs::create_directories(pod->log_directory, ec);
    // Beneath the log directory and following no symlink: one planted there (the directory is
    // kubelet's and log agents') must not turn the container's output into a write to a host file.
    int fd = open_beneath(pod->log_directory.c_str(), config.log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0640);
    if (fd < 0)
      return fail(errno_status(-fd, "config.log_path: create log file " + log_path +
                                        (-fd == ELOOP || -fd == EXDEV ? " (a symlink on the way is not followed)" : ""),
                               Code::invalid_argument));
    ::close(fd);
  }
  fault_point(FaultPoint::create_container_log_created);
  auto cfg_json = config_to_json(config);
  if (!cfg_json.ok()) return fail(cfg_json.status());
  ContainerRecord& r = c->rec;
  r.id = id;
  r.sandbox_id = pod->id;
  r.name = md.name();
  r.attempt = md.attempt();
  r.image_id = image->id;
  r.image_ref = image->repo_digests.empty() ? image->id : image->repo_digests.front();
  r.stop_signal = image->config.stop_signal;
  r.runtime_handler = pod->runtime_handler;
  r.log_path = log_path;
  r.config = *cfg_json;
  r.state = v1::CONTAINER_CREATED;
  r.created_at = wall_clock_ns();
  r.uid = spec->user.uid;
  r.gid = spec->user.gid;
  r.additional_gids = spec->user.additional_gids;
  c->runtime_may_exist = false;
  if (Status s = impl_->save(*c); !s.ok()) return fail(s);
  fault_point(FaultPoint::create_container_record_written);
  {
    std::lock_guard lock(impl_->mu);
    impl_->containers[id] = c;
  }
  undo.dismiss();
  (void)std::move(*held).keep();  // released by the container's removal
  impl_->emit(*c, v1::CONTAINER_CREATED_EVENT);
  return id;
}

Status ContainerManager::start(const std::string& id_or_prefix) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  std::lock_guard op(c->op);
  const std::string id = c->rec.id;
  {
    std::lock_guard lock(c->mu);
    if (c->removed) return not_found("container " + id + " not found (it was removed)");
  }
  if (c->state() != v1::CONTAINER_CREATED)
    return failed_precondition("start container " + id + ": it is " + v1::ContainerState_Name(c->state()) + ", not CREATED");
  auto lease = impl_->opt.pods->lease(c->rec.sandbox_id);
  if (!lease.ok()) return failed_precondition("start container " + id + ": " + lease.status().message());
  auto rt = impl_->runtime_for(c->rec.runtime_handler);
  if (!rt.ok()) return rt.status();

  // A start that fails leaves the container EXITED with the runtime's words, as containerd does.
  auto start_failed = [&](const Status& s) {
    if (Status d = rt->remove(id); !d.ok()) spdlog::error("container {}: undo step 'runtime' of a failed start: {}", id, d.message());
    {
      std::lock_guard lock(c->mu);
      if (c->rec.state != v1::CONTAINER_EXITED) {
        c->rec.state = v1::CONTAINER_EXITED;
        c->rec.exit_code = 128;
        c->rec.reason = "StartError";
        c->rec.message = s.message();
        c->rec.finished_at = wall_clock_ns();
        c->rec.started_at = c->rec.started_at ? c->rec.started_at : c->rec.finished_at;
      }
      if (Status saved = impl_->save(*c); !saved.ok())
        spdlog::error("container {}: recording the failed start: {}", id, saved.message());
      c->exited.notify_all();
    }
    impl_->emit(*c, v1::CONTAINER_STOPPED_EVENT);
    return s.context("start container " + id);
  };
  (void)::unlink(c->exit_file.c_str());
  // Without a log directory the output is read and dropped (a full pipe would stall the container).
  MonitorSpawnOptions m{.monitor_path = impl_->opt.monitor_binary, .id = id, .bundle = c->bundle, .runtime_path = rt->binary(),
                        .runtime_root = rt->root(), .systemd_cgroup = impl_->opt.runtimes.systemd_cgroup(), .socket_path = c->socket,
                        .exit_file = c->exit_file, .log_path = c->rec.log_path.empty() ? "/dev/null" : c->rec.log_path, .tty = c->config.tty(),
                        .open_stdin = c->config.stdin(), .stdin_once = c->config.stdin_once(), .start = true,
                        .diagnostics_path = c->bundle + "/monitor.log"};
  const std::string& log_dir = lease->info.log_directory;
  if (!c->rec.log_path.empty() && !log_dir.empty() && c->rec.log_path.rfind(log_dir + "/", 0) == 0) m.log_dir = log_dir;
  c->runtime_may_exist = true;
  fault_point(FaultPoint::start_container_monitor_spawning);
  auto started = spawn_monitor(m);
  if (!started.ok()) return start_failed(started.status());
  fault_point(FaultPoint::start_container_runtime_started);
  // RUNNING is recorded and told before the exit watch begins: exits are learnt only through the
  // watch, so a container that exits at once is never reported STOPPED before STARTED.
  {
    std::lock_guard lock(c->mu);
    c->rec.pid = started->container_pid;
    c->rec.started_at = wall_clock_ns();
    if (c->rec.state == v1::CONTAINER_CREATED) c->rec.state = v1::CONTAINER_RUNNING;
    if (Status s = impl_->save(*c); !s.ok()) spdlog::error("container {}: {}", id, s.message());
  }
  fault_point(FaultPoint::start_container_running_recorded);
  impl_->emit(*c, v1::CONTAINER_STARTED_EVENT);
  if (Status s = impl_->watcher->watch(id, c->socket, c->exit_file); !s.ok()) {
    if (Status k = rt->kill(id, 9); !k.ok()) spdlog::error("container {}: undo step 'kill' of a failed watch: {}", id, k.message());
    return start_failed(s);
  }
  return ok_status();
}

std::vector<std::string> ContainerManager::ids_in_sandbox(const std::string& sandbox_id) {
  std::vector<std::string> out;
  std::lock_guard lock(impl_->mu);
  for (const auto& [id, c] : impl_->containers)
    if (c->rec.sandbox_id == sandbox_id) out.push_back(id);
  return out;
}

}  // namespace berth
