// RemoveContainer, and the removal of containers whose pod went while berthd was down. Every step
// is idempotent and runs whatever the container's state (never started, running, exited, monitor
// gone, runtime state lost, bundle gone after a reboot), so a removal cut short by a crash is
// finished by the next call. A step that fails is logged with its name and the container.
#include <filesystem>
#include <spdlog/spdlog.h>

#include "berth/cgroup_removal.h"
#include "berth/cgroups_path.h"
#include "berth/systemd_units.h"
#include "berth/container_rootfs.h"
#include "berth/mutex.h"
#include "berth/prepared_mounts.h"
#include "berth/fault_point.h"
#include "berth/file_tree.h"
#include "berth/image_manager.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

namespace {

Status failed_step(const std::string& id, const char* step, const Status& st) {
  spdlog::error("container {}: remove step '{}' failed: {}", id, step, st.message());
  return st.context("remove container " + id);
}

}  // namespace

Status ContainerManager::Impl::destroy(Container& c) {
  const std::string id = c.id;
  if (c.state() == v1::CONTAINER_RUNNING)
    if (Status s = kill_and_wait(c, std::chrono::seconds(30)); !s.ok()) return failed_step(id, "kill", s);
  fault_point(FaultPoint::remove_container_killed);
  if (c.runtime_may_exist) {
    auto rt = runtime_for(c.runtime_handler);
    if (!rt.ok()) return failed_step(id, "runtime", rt.status());
    // An exit is recorded after the monitor reaped the init, so the runtime sees it stopped and a
    // plain delete does. The forced one (which polls in 100 ms sleeps for what it kills) is for
    // a container never seen to exit, or one a plain delete finds running (its exit recorded as
    // unknown while it still ran).
    Status s = c.runtime_hung ? deadline_exceeded("the runtime's delete at the exit did not finish")
               : c.state() == v1::CONTAINER_EXITED ? rt->remove_stopped(id)
                                                   : rt->remove(id);
    if (!s.ok() && !c.runtime_hung && s.code() != Code::deadline_exceeded && c.state() == v1::CONTAINER_EXITED) {
      spdlog::warn("container {}: the runtime refused to delete it: {}; deleting it by force", id, s.message());
      s = rt->remove(id);
    }
    // A runtime that hangs would hang every removal of the container: berthd does what its
    // delete does, for a container whose init has ended (killed above): what is left in its
    // cgroup killed with the cgroup, then the runtime's state of it.
    if (s.code() == Code::deadline_exceeded && c.state() == v1::CONTAINER_EXITED) {
      spdlog::warn("container {}: {}: {} hangs; removing its cgroup and state by hand", id, s.message(), rt->binary());
      s = c.cgroups_path.empty() ? ok_status() : remove_cgroup(c.cgroups_path, opt.runtimes.systemd_cgroup());
      if (s.ok()) s = rt->forget(id);
    }
    if (!s.ok()) return failed_step(id, "runtime", s);
    c.runtime_may_exist = false;
  }
  fault_point(FaultPoint::remove_container_runtime_deleted);
  // The runtime's delete removes the cgroup; one it lost (its create killed midway) goes here.
  // Under systemd the scope the runtime made is stopped too: runc and crun leave one whose
  // processes were killed listed as failed, which nothing else would forget.
  if (!c.cgroups_path.empty()) {
    if (Status s = remove_cgroup(c.cgroups_path, opt.runtimes.systemd_cgroup()); !s.ok())
      return failed_step(id, "cgroup", s);
    if (opt.systemd)
      if (Status s = opt.systemd->stop_unit(systemd_cgroup_of(c.cgroups_path).scope); !s.ok())
        return failed_step(id, "cgroup", s);
  }
  watcher->unwatch(id);
  if (Status s = unmount_container_rootfs(c.rootfs); !s.ok()) return failed_step(id, "rootfs", s);
  if (Status s = release_prepared_mounts(c.bundle + "/mounts"); !s.ok()) return failed_step(id, "mounts", s);
  if (Status s = volumes->detach(id); !s.ok()) return failed_step(id, "image volumes", s);
  fault_point(FaultPoint::remove_container_rootfs_unmounted);
  ::unlink(c.socket.c_str());  // a monitor killed before it could remove it
  for (const std::string& dir : {c.bundle, layers_dir + "/" + id})
    if (Status s = remove_tree(dir); !s.ok()) return failed_step(id, "files", s);
  fault_point(FaultPoint::remove_container_dirs_removed);
  if (Status s = remove_container_record(records_dir, id); !s.ok()) return failed_step(id, "record", s);
  fault_point(FaultPoint::remove_container_record_removed);
  std::string image_id, key;
  {
    MutexLock lock(c.mu);
    image_id = c.rec.image_id;
    key = name_key(c.sandbox_id, c.config.metadata());
    c.removed = true;
  }
  opt.images->release(image_id);
  {
    MutexLock lock(mu);
    if (auto it = containers.find(id); it != containers.end() && it->second.get() == &c) containers.erase(it);
    names.release(key, id);
  }
  emit(c, v1::CONTAINER_DELETED_EVENT);
  return ok_status();
}

Status ContainerManager::remove(const std::string& id_or_prefix) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err.code() == Code::not_found ? ok_status() : err;  // CRI: removing an unknown container succeeds
  MutexLock op(c->op);
  {
    MutexLock lock(c->mu);
    if (c->removed) return ok_status();
  }
  return impl_->destroy(*c);
}

}  // namespace berth
