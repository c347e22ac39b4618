// Recovery at berthd start: every container record comes back, checked against its monitor rather
// than trusted. RUNNING ones are watched again (an exit that happened meanwhile is read from the
// exit file the monitor left). A CREATED one whose StartContainer a crash cut short is adopted as
// RUNNING when its monitor answers, takes the exit its monitor left, or stays CREATED when nothing
// of it ran. Records whose pod is gone wait for finish_recovery() to remove them. Bundles,
// writable layers and monitor sockets of no record (a CreateContainer cut short before its record
// was written) are removed at once, each with one log line.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <spdlog/spdlog.h>

#include "berth/cgroup_removal.h"
#include "berth/cgroups_path.h"
#include "berth/container_rootfs.h"
#include "berth/mutex.h"
#include "berth/prepared_mounts.h"
#include "berth/fault_point.h"
#include "berth/file_text.h"
#include "berth/file_tree.h"
#include "berth/image_manager.h"
#include "berth/oci_spec.h"
#include "berth/process_identity.h"
#include "berth/sandbox_manager.h"
#include "berth/wall_clock.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

namespace {

// What recovery needs of a bundle's config.json: its cgroupsPath and its mounts' sources (the
// image volumes it uses). None when there is no spec (a bundle cut short before it was written) or
// it does not read (a damaged file must not stop a start).
struct SpecFacts {
  std::string cgroups_path;
  std::vector<std::string> mount_sources;
};

SpecFacts read_spec_facts(const std::string& bundle) {
  SpecFacts out;
  if (!fs::exists(bundle + "/config.json")) return out;
  auto spec = oci::read_spec_file(bundle + "/config.json");
  if (!spec.ok()) {
    spdlog::warn("containers: {}", spec.status().message());
    return out;
  }
  if (spec->linux) out.cgroups_path = spec->linux->cgroups_path;
  for (const oci::Mount& m : spec->mounts) out.mount_sources.push_back(m.source);
  return out;
}

std::string spec_cgroups_path(const std::string& bundle) { return read_spec_facts(bundle).cgroups_path; }

}  // namespace

bool ContainerManager::Impl::settle_created(Container& c, bool* monitor_lost) {
  ContainerRecord& r = c.rec;
  auto hello = monitor_hello(c.socket, std::chrono::seconds(5));
  if (hello.ok()) {
    // berthd died inside StartContainer after the monitor started the container.
    r.state = v1::CONTAINER_RUNNING;
    r.pid = hello->container_pid ? hello->container_pid : read_pid_file(c.bundle + "/pid");
    r.started_at = wall_clock_ns();
    spdlog::info(
        "container {}: adopted as RUNNING (pid {}): its StartContainer was cut short after the monitor started it",
        r.id, r.pid);
    if (!r.restore_from.empty()) {  // its restore ran: the images (all of its memory) are spent
      if (Status s = remove_tree(r.restore_from); !s.ok()) spdlog::warn("container {}: {}", r.id, s.message());
      r.restore_from.clear();
    }
    if (Status s = save(c); !s.ok()) spdlog::error("container {}: {}", r.id, s.message());
    return true;
  }
  if (auto exit = read_exit_file(c.exit_file); exit.ok()) {
    r.state = v1::CONTAINER_EXITED;
    r.finished_at = exit->exited_at_ns ? exit->exited_at_ns : wall_clock_ns();
    r.started_at = r.started_at ? r.started_at : r.finished_at;
    if (exit->exit_code < 0) {  // the runtime's create failed
      r.exit_code = 128;
      r.reason = "StartError";
    } else {
      r.exit_code = exit->exit_code;
      r.reason = exit->exit_code == 0 ? "Completed" : "Error";
    }
    r.message = exit->reason;
    spdlog::info("container {}: its StartContainer was cut short; the monitor left its exit: {}", r.id, exit->reason);
    if (Status s = save(c); !s.ok()) spdlog::error("container {}: {}", r.id, s.message());
    return false;
  }
  pid_t pid = read_pid_file(c.bundle + "/pid");
  if (pid > 0 && process_in_cgroup_leaf(pid, r.id)) {
    // The runtime has it (created or running) but no monitor holds it: its output and exit are
    // lost, so it is killed by finish_recovery() and recorded as ended unknown.
    r.state = v1::CONTAINER_EXITED;
    r.exit_code = kUnknownExitCode;
    r.reason = "Unknown";
    r.message = "berth-monitor of " + r.id + " is gone; the container it started was killed at berthd's restart";
    r.finished_at = wall_clock_ns();
    r.started_at = r.started_at ? r.started_at : r.finished_at;
    *monitor_lost = true;
    if (Status s = save(c); !s.ok()) spdlog::error("container {}: {}", r.id, s.message());
    return false;
  }
  if (!fs::exists(c.bundle + "/config.json")) {
    // Runtime state is gone (a reboot): it can never start.
    r.state = v1::CONTAINER_EXITED;
    r.exit_code = 255;
    r.reason = "Unknown";
    r.message = "berth lost the container's runtime state (" + c.bundle + ") before it started";
    r.finished_at = wall_clock_ns();
    return false;
  }
  // Nothing of it ran: it stays CREATED and can be started.
  c.runtime_may_exist = false;
  return false;
}

void ContainerManager::Impl::recover() {
  auto loaded = load_container_records(records_dir, quarantine_dir);
  for (const auto& q : loaded.quarantined) spdlog::error("container record quarantined: {}", q);
  for (const auto& t : loaded.temps_removed) spdlog::info("containers: removed {}, a record write cut short", t);
  std::vector<std::shared_ptr<Container>> to_watch;
  std::map<std::string, std::vector<std::string>> volume_sources;
  for (auto& rec : loaded.valid) {
    auto c = std::make_shared<Container>();
    bool watch = false, monitor_lost = false;
    std::string key;
    {
      // Not shared yet: its locks are taken for what they guard.
      MutexLock op(c->op);
      MutexLock lock(c->mu);
      if (!config_from_json(rec.config, &c->config)) {
        spdlog::error("container {}: its record's config does not decode; the container is left out", rec.id);
        continue;
      }
      c->bundle = containers_state + "/" + rec.id;
      c->rootfs = c->bundle + "/rootfs";
      c->upper = layers_dir + "/" + rec.id + "/upper";
      c->work = layers_dir + "/" + rec.id + "/work";
      c->socket = monitor_socket(rec.id);
      c->exit_file = c->bundle + "/exit.json";
      SpecFacts facts = read_spec_facts(c->bundle);
      c->cgroups_path = facts.cgroups_path;
      volume_sources[rec.id] = facts.mount_sources;
      if (c->cgroups_path.empty()) {
        // The bundle went with a reboot: the path is derived again, as CreateContainer did.
        if (auto pod = opt.pods->info(rec.sandbox_id))
          if (auto cg = cgroups_path_for(pod->cgroup_parent, rec.id, opt.runtimes.systemd_cgroup()); cg.ok())
            c->cgroups_path = *cg;
      }
      std::string image_signal = rec.stop_signal;
      if (image_signal.empty())  // a record from before berth kept the image's signal
        if (auto image = opt.images->find(rec.image_id)) image_signal = image->config.stop_signal;
      c->stop_signal = stop_signal_of(c->config, image_signal);
      opt.images->hold(rec.image_id);
      c->id = rec.id;
      c->sandbox_id = rec.sandbox_id;
      c->runtime_handler = rec.runtime_handler;
      c->rec = std::move(rec);
      watch = c->rec.state == v1::CONTAINER_RUNNING ||
              (c->rec.state == v1::CONTAINER_CREATED && settle_created(*c, &monitor_lost));
      key = name_key(c->sandbox_id, c->config.metadata());
    }
    if (watch) to_watch.push_back(c);
    const bool pod_gone = !opt.pods->info(c->sandbox_id);
    if (Status s = names.reserve(key, c->id, "container"); !s.ok())
      spdlog::warn("container {}: {}", c->id, s.message());
    MutexLock index_lock(mu);
    if (pod_gone) orphans.push_back(c->id);
    if (monitor_lost) unmonitored.push_back(c->id);
    containers[c->id] = c;
  }
  for (const auto& c : to_watch) {
    if (Status s = watcher->watch(c->id, c->socket, c->exit_file); !s.ok())
      spdlog::error("container {}: {}", c->id, s.message());
  }
  if (!loaded.valid.empty()) {
    MutexLock lock(mu);
    spdlog::info("containers: recovered {} from records, {} running, {} of gone pods to remove", loaded.valid.size(),
                 to_watch.size(), orphans.size());
  }
  volumes->recover(volume_sources);
  remove_leftovers();
}

void ContainerManager::Impl::remove_leftovers() {
  std::error_code ec;
  std::set<std::string> socket_names, known;
  {
    MutexLock lock(mu);
    for (const auto& [id, c] : containers) {
      socket_names.insert(fs::path(c->socket).filename());
      known.insert(id);
    }
  }
  for (const auto& e : fs::directory_iterator(monitors_dir, ec)) {
    if (socket_names.count(e.path().filename())) continue;
    // A monitor of no record: its container is killed (the monitor then exits); what the runtime
    // keeps of it goes with the runtime-root sweep.
    if (auto hello = monitor_hello(e.path(), std::chrono::seconds(5)); hello.ok()) {
      for (pid_t pid : {hello->container_pid, hello->monitor_pid}) {
        if (pid <= 0) continue;
        if (UniqueFd fd = open_pidfd(pid); fd) ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0);
      }
      spdlog::info("containers: killed the container {} and the monitor {} of leftover socket {} of no known container",
                   hello->container_pid, hello->monitor_pid, e.path().string());
    }
    if (::unlink(e.path().c_str()) == 0)
      spdlog::info("containers: removed leftover monitor socket {}", e.path().string());
  }
  for (const auto& e : fs::directory_iterator(containers_state, ec)) {
    std::string id = e.path().filename();
    if (known.count(id)) continue;
    std::string cgroups_path = spec_cgroups_path(e.path());
    Status s = unmount_container_rootfs(e.path() / "rootfs");
    if (s.ok()) s = release_prepared_mounts(e.path() / "mounts");
    if (s.ok() && !cgroups_path.empty()) s = remove_cgroup(cgroups_path, opt.runtimes.systemd_cgroup());
    if (s.ok()) s = remove_tree(e.path());
    if (!s.ok())
      spdlog::warn("containers: cannot remove leftover bundle {}: {}", e.path().string(), s.message());
    else
      spdlog::info("containers: removed leftover bundle {} of no known container", e.path().string());
  }
  for (const auto& e : fs::directory_iterator(layers_dir, ec)) {
    std::string id = e.path().filename();
    if (known.count(id) || id.size() != 64) continue;
    if (Status s = remove_tree(e.path()); !s.ok())
      spdlog::warn("containers: cannot remove leftover writable layer {}: {}", e.path().string(), s.message());
    else
      spdlog::info("containers: removed leftover writable layer {} of no known container", e.path().string());
  }
}

void ContainerManager::finish_recovery() {
  std::vector<std::string> orphans, unmonitored;
  {
    MutexLock lock(impl_->mu);
    orphans = std::move(impl_->orphans);
    unmonitored = std::move(impl_->unmonitored);
  }
  for (const auto& id : unmonitored) {
    auto c = impl_->find(id, nullptr);
    if (!c) continue;
    MutexLock op(c->op);
    {
      MutexLock lock(c->mu);
      if (c->removed) continue;
    }
    auto rt = impl_->runtime_for(c->runtime_handler);
    Status s = rt.ok() ? rt->remove(id) : rt.status();
    if (s.ok() && !c->cgroups_path.empty()) s = remove_cgroup(c->cgroups_path, impl_->opt.runtimes.systemd_cgroup());
    if (!s.ok())
      spdlog::error("container {}: killing it (it runs without a monitor): {}", id, s.message());
    else
      c->runtime_may_exist = false;
  }
  for (const auto& id : orphans) {
    auto c = impl_->find(id, nullptr);
    if (!c) continue;
    MutexLock op(c->op);
    {
      MutexLock lock(c->mu);
      if (c->removed) continue;  // kubelet removed it meanwhile: its image hold is already gone
    }
    fault_point(FaultPoint::recovery_removing_container);
    if (Status s = impl_->destroy(*c); !s.ok())
      spdlog::error("container {}: removing it (its pod is gone): {}", id, s.message());
    else
      spdlog::info("container {}: removed (its pod sandbox {} is gone)", id, c->sandbox_id);
  }
}

}  // namespace berth
