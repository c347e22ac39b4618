// CgroupParents: the cgroup parent directories that did not exist when a pod asked for them, so
// the runtime made them for it (a pod's cgroup_parent of "/a/b" on a host without /a). They are
// berth's to remove once no pod uses them, or they would outlive every pod. Kept in
// <root>/cgroup-parents.json (a JSON array of absolute directory paths, one per hierarchy), so a
// parent made by a pod removed later, or before a restart of berthd, is still known.
// With the systemd cgroup driver the parents are slices, which systemd made when a scope named
// them: a slice berth caused to exist is stopped through systemd once it holds nothing, rather
// than removed behind systemd's back.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

class SystemdUnits;

class CgroupParents {
 public:
  // Loads what an earlier berthd recorded. `systemd`: the driver's units (null with cgroupfs).
  CgroupParents(std::string file, SystemdUnits* systemd);
  // Records, before the runtime makes them, the ancestors of `cgroup_dir` (as cgroup_dir_of gives
  // it: "/a/b/<id>") that are missing in some hierarchy.
  Status note_missing(const std::string& cgroup_dir);
  // Once a pod's cgroup is gone: removes each recorded ancestor of `cgroup_dir` that holds no
  // cgroup or process any more, deepest first (one in use by another pod stays recorded).
  void release(const std::string& cgroup_dir);
  // Whether `dir` ("/a/b", a pod's cgroup parent) was made for a pod in every hierarchy, so its
  // limits are berth's to set; one that kubelet or the operator made is theirs.
  bool made(const std::string& dir);

 private:
  Status save_locked() BERTH_REQUIRES(mu_);
  bool remove(const std::string& dir);  // true when it is gone
  Mutex mu_;
  std::string file_;
  SystemdUnits* systemd_;
  std::set<std::string> dirs_ BERTH_GUARDED_BY(mu_);
};

}  // namespace berth
