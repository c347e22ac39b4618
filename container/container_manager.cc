// Container lifecycle outside creation (container_create.cc): the manager's opening, start (the
// monitor runs the runtime's `run --detach`: one runtime process for create and start, under a
// lease on the pod, so no container is started in a pod being stopped or removed), the record's
// config encoding and the index lookups.
#include "berth/container_manager.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <nettle/base64.h>
#include <spdlog/spdlog.h>

#include "berth/fault_point.h"
#include "berth/file_tree.h"
#include "berth/free_space.h"
#include "berth/mutex.h"
#include "berth/object_id.h"
#include "berth/private_dir.h"
#include "berth/sandbox_manager.h"
#include "berth/wall_clock.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;

bool config_from_json(const nlohmann::json& j, v1::ContainerConfig* config) {
  if (!j.is_string()) return false;
  const std::string& text = j.get_ref<const std::string&>();
  std::string bin(BASE64_DECODE_LENGTH(text.size()), '\0');
  size_t n = bin.size();
  base64_decode_ctx ctx;
  base64_decode_init(&ctx);
  if (!base64_decode_update(&ctx, &n, reinterpret_cast<uint8_t*>(bin.data()), text.size(), text.data()) ||
      !base64_decode_final(&ctx))
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
  MutexLock lock(mu);
  return find_by_id_or_prefix(containers, id_or_prefix, "container", "container_id", err);
}

void ContainerManager::Impl::emit(const Container& c, v1::ContainerEventType type) const {
  if (opt.events) opt.events->container_changed(c.id, c.sandbox_id, type);
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
  {
    MutexLock lock(impl->mu);
    impl->process_defaults = impl->opt.process_defaults;
  }
  impl->containers_state = impl->opt.state_dir + "/containers";
  // Monitor sockets live apart from the bundles: a unix socket path must stay under 108 bytes.
  impl->monitors_dir = impl->opt.state_dir + "/monitors";
  if (impl->monitor_socket(std::string(64, '0')).size() >= 108)
    return invalid_argument("containers: the state dir " + impl->opt.state_dir +
                            " is too long for monitor sockets under it (" + impl->monitors_dir +
                            "/<32 hex>.sock must stay under 108 bytes)");
  impl->layers_dir = impl->opt.root_dir + "/containers";
  impl->records_dir = impl->opt.root_dir + "/container-records";
  impl->quarantine_dir = impl->opt.root_dir + "/container-records-quarantine";
  // On the root dir's disk, not the state dir's tmpfs: CRIU's images hold all of a container's memory.
  impl->checkpoints_dir = impl->opt.root_dir + "/checkpoints";
  impl->restores_dir = impl->opt.root_dir + "/restores";
  for (const auto& d : {impl->containers_state, impl->monitors_dir, impl->layers_dir, impl->records_dir,
                        impl->checkpoints_dir, impl->restores_dir})
    if (Status s = make_private_dir(d); !s.ok()) return s.context("containers");
  const auto cut_checkpoints = sweep_checkpoint_leftovers(impl->checkpoints_dir, impl->restores_dir);
  if (Status s = make_private_dir(impl->opt.state_dir + "/image-volumes"); !s.ok()) return s.context("containers");
  impl->volumes = std::make_unique<ImageVolumes>(impl->opt.state_dir + "/image-volumes", *impl->opt.images);
  auto helper = ExecHelperBinary::load(impl->opt.exec_helper);
  if (!helper.ok()) return helper.status().context("containers");
  impl->exec_helper = std::move(*helper);
  Impl* raw = impl.get();
  impl->exited_deletes = std::make_unique<SerialWorker>();
  impl->watcher = std::make_unique<MonitorWatcher>(
      [raw](const std::string& id, const ExitInfo& e) { raw->on_exit(id, e); },
      [raw](const std::string& id, const MonitorWatcher::LogLoss& l) { raw->on_log_loss(id, l); });

  impl->recover();
  thaw_cut_checkpoints(*impl, cut_checkpoints);
  return std::unique_ptr<ContainerManager>(new ContainerManager(std::move(impl)));
}

// Told to the operator when it starts and when it ends, with the totals; the monitor repeats the
// state once a second while output is lost (the count grows), which is logged no more.
void ContainerManager::Impl::on_log_loss(const std::string& id, const MonitorWatcher::LogLoss& loss) {
  std::shared_ptr<Container> c;
  {
    MutexLock lock(mu);
    auto it = containers.find(id);
    if (it == containers.end()) return;
    c = it->second;
  }
  std::string path;
  uint64_t newly = 0;
  bool changed = false;
  {
    MutexLock lock(c->mu);
    path = c->rec.log_path;
    if (loss.bytes > c->log_bytes_lost) newly = loss.bytes - c->log_bytes_lost;
    c->log_bytes_lost = std::max(c->log_bytes_lost, loss.bytes);
    changed = c->log_losing != !loss.writing;
    c->log_losing = !loss.writing;
  }
  if (opt.on_log_bytes_lost && newly) opt.on_log_bytes_lost(newly);
  if (!changed) return;
  if (!loss.writing)
    spdlog::warn("container {}: its log file {} takes no more output ({}); output is dropped and counted until it does",
                 id, path, std::strerror(loss.sys_errno));
  else
    spdlog::warn("container {}: its log file {} takes output again; {} records ({} bytes) of output were lost so far",
                 id, path, loss.records, loss.bytes);
}

// The CDI devices a device plugin or DRA driver asked for, applied to the spec (device nodes with
// their cgroup rules, mounts, env, hooks, groups): every one, or the create fails naming it.
Status ContainerManager::start(const std::string& id_or_prefix) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  MutexLock op(c->op);
  const std::string id = c->id;
  {
    MutexLock lock(c->mu);
    if (c->removed) return not_found("container " + id + " not found (it was removed)");
  }
  if (c->state() != v1::CONTAINER_CREATED)
    return failed_precondition("start container " + id + ": it is " + v1::ContainerState_Name(c->state()) +
                               ", not CREATED");
  auto lease = impl_->opt.pods->lease(c->sandbox_id);
  if (!lease.ok()) return failed_precondition("start container " + id + ": " + lease.status().message());
  auto rt = impl_->runtime_for(c->runtime_handler);
  if (!rt.ok()) return rt.status();

  // A start that fails leaves the container EXITED with the runtime's words, as containerd does.
  auto start_failed = [&](const Status& s) {
    if (Status d = rt->remove(id); !d.ok())
      spdlog::error("container {}: undo step 'runtime' of a failed start: {}", id, d.message());
    {
      MutexLock lock(c->mu);
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
  // Refused while nothing is made, so the container stays CREATED and starts once space is back.
  if (Status s = require_free_space(c->bundle, "state dir of container " + id); !s.ok()) return s;
  if (const std::string& dir = lease->info.log_directory; !dir.empty())
    if (Status s = require_free_space(dir, "log directory of container " + id); !s.ok()) return s;
  (void)::unlink(c->exit_file.c_str());
  std::string log_path;
  std::string restore_from;
  bool tty = false, open_stdin = false, stdin_once = false;
  {
    MutexLock lock(c->mu);
    log_path = c->rec.log_path;
    restore_from = c->rec.restore_from;
    tty = c->config.tty();
    open_stdin = c->config.stdin();
    stdin_once = c->config.stdin_once();
  }
  // Without a log directory the output is read and dropped (a full pipe would stall the container).
  MonitorSpawnOptions m{.monitor_path = impl_->opt.monitor_binary,
                        .id = id,
                        .bundle = c->bundle,
                        .runtime_path = rt->binary(),
                        .runtime_root = rt->root(),
                        .systemd_cgroup = impl_->opt.runtimes.systemd_cgroup(),
                        .socket_path = c->socket,
                        .exit_file = c->exit_file,
                        .log_path = log_path.empty() ? "/dev/null" : log_path,
                        .tty = tty,
                        .open_stdin = open_stdin,
                        .stdin_once = stdin_once,
                        .start = true,
                        .restore_from = restore_from,
                        .diagnostics_path = c->bundle + "/monitor.log",
                        .timeout = rt->timeout()};
  const std::string& log_dir = lease->info.log_directory;
  if (!log_path.empty() && !log_dir.empty() && log_path.rfind(log_dir + "/", 0) == 0) m.log_dir = log_dir;
  c->runtime_may_exist = true;
  fault_point(FaultPoint::start_container_monitor_spawning);
  auto started = spawn_monitor(m);
  if (!started.ok()) return start_failed(started.status());
  fault_point(FaultPoint::start_container_runtime_started);
  // RUNNING is recorded and told before the exit watch begins: exits are learnt only through the
  // watch, so a container that exits at once is never reported STOPPED before STARTED.
  {
    MutexLock lock(c->mu);
    c->rec.pid = started->container_pid;
    c->rec.started_at = wall_clock_ns();
    if (c->rec.state == v1::CONTAINER_CREATED) c->rec.state = v1::CONTAINER_RUNNING;
    c->rec.restore_from.clear();
    if (Status s = impl_->save(*c); !s.ok()) spdlog::error("container {}: {}", id, s.message());
  }
  // A restore's images are spent once its processes run again (they hold all of its memory).
  if (!restore_from.empty())
    if (Status s = remove_tree(restore_from); !s.ok()) spdlog::warn("container {}: {}", id, s.message());
  fault_point(FaultPoint::start_container_running_recorded);
  impl_->emit(*c, v1::CONTAINER_STARTED_EVENT);
  if (Status s = impl_->watcher->watch(id, c->socket, c->exit_file); !s.ok()) {
    if (Status k = rt->kill(id, 9); !k.ok())
      spdlog::error("container {}: undo step 'kill' of a failed watch: {}", id, k.message());
    return start_failed(s);
  }
  return ok_status();
}

std::vector<std::string> ContainerManager::ids_in_sandbox(const std::string& sandbox_id) {
  std::vector<std::string> out;
  MutexLock lock(impl_->mu);
  for (const auto& [id, c] : impl_->containers)
    if (c->sandbox_id == sandbox_id) out.push_back(id);
  return out;
}

void ContainerManager::set_process_defaults(ContainerProcessDefaults defaults) {
  MutexLock lock(impl_->mu);
  impl_->process_defaults = std::move(defaults);
}

}  // namespace berth
