// See cgroup_parents.h.
#include "cgroup_parents.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <vector>

#include "berth/atomic_file.h"
#include "berth/cgroup_removal.h"
#include "berth/file_text.h"
#include "berth/json_fields.h"
#include "berth/mutex.h"
#include "berth/systemd_units.h"

namespace berth {
namespace {

// "/a/b/<id>" -> {"/a", "/a/b"}
std::vector<std::string> ancestors(const std::string& cgroup_dir) {
  std::vector<std::string> out;
  for (size_t at = cgroup_dir.find('/', 1); at != std::string::npos; at = cgroup_dir.find('/', at + 1))
    out.push_back(cgroup_dir.substr(0, at));
  return out;
}

}  // namespace

CgroupParents::CgroupParents(std::string file, SystemdUnits* systemd) : file_(std::move(file)), systemd_(systemd) {
  auto j = nlohmann::json::parse(read_text_file(file_), nullptr, false);
  if (!j.is_array()) return;  // none recorded yet (or a file cut short: its parents stay)
  // The file is a bare array; the reader reads members, so it is given one under a name.
  const nlohmann::json doc = {{"dirs", std::move(j)}};
  JsonFields f(doc, file_);
  for (auto& d : f.strings("dirs")) dirs_.insert(std::move(d));
  if (!f.ok()) spdlog::warn("sandboxes: cgroup parents: skipped what is not a path: {}", f.status().message());
}

Status CgroupParents::save_locked() {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& d : dirs_) j.push_back(d);
  // Not fsync'd: the cgroups it names do not outlive a boot, and a crash of berthd alone keeps
  // what it wrote in the page cache.
  return write_file_atomically(file_, j.dump() + "\n", 0600, false).context("record cgroup parents");
}

Status CgroupParents::note_missing(const std::string& cgroup_dir) {
  MutexLock lock(mu_);
  bool added = false;
  for (const auto& mount : cgroup_hierarchy_mounts())
    for (const auto& a : ancestors(cgroup_dir)) {
      std::string dir = mount + a;
      bool missing = ::access(dir.c_str(), F_OK) != 0;
      // A slice's directory appears only once a unit below it starts: systemd knows whether it is.
      if (systemd_) {
        auto active = systemd_->unit_active(a.substr(a.rfind('/') + 1));
        if (!active.ok()) return active.status().context("cgroup parent " + a);
        missing = !*active;
      }
      if (missing && dirs_.insert(dir).second) added = true;
    }
  return added ? save_locked() : ok_status();
}

bool CgroupParents::made(const std::string& dir) {
  MutexLock lock(mu_);
  auto mounts = cgroup_hierarchy_mounts();
  if (mounts.empty()) return false;
  for (const auto& mount : mounts)
    if (!dirs_.count(mount + dir)) return false;
  return true;
}

bool CgroupParents::remove(const std::string& dir) {
  // rmdir of a cgroup fails (EBUSY, ENOTEMPTY) while a child cgroup or a process is in it.
  if (!systemd_) return ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
  if (::access(dir.c_str(), F_OK) != 0) return true;
  // Stopping a slice would stop every unit in it: only one that holds nothing goes.
  if (cgroup_holds_anything(dir)) return false;
  std::string unit = dir.substr(dir.rfind('/') + 1);
  if (Status s = systemd_->stop_unit(unit); !s.ok()) {
    spdlog::warn("sandboxes: cgroup parent {}: {}", dir, s.message());
    return false;
  }
  return true;
}

void CgroupParents::release(const std::string& cgroup_dir) {
  MutexLock lock(mu_);
  bool changed = false;
  auto up = ancestors(cgroup_dir);
  for (const auto& mount : cgroup_hierarchy_mounts())
    for (auto it = up.rbegin(); it != up.rend(); ++it) {
      std::string dir = mount + *it;
      if (!dirs_.count(dir)) continue;
      if (remove(dir)) {
        spdlog::info("sandboxes: removed cgroup parent {} (made for a pod, no longer used)", dir);
        dirs_.erase(dir);
        changed = true;
      }
    }
  if (changed)
    if (Status s = save_locked(); !s.ok()) spdlog::warn("sandboxes: {}", s.message());
}

}  // namespace berth
