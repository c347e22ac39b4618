// Image volumes (CRI Mount.image): an image's layers mounted read-only once per pod and image at
// <state>/image-volumes/<pod id>/<image id hex> (an overlay of the layers without an upper dir,
// or a bind of the only layer), shared by every container of the pod that names the image, and
// holding the image from its first user to its last, so RemoveImage cannot take the layers from
// under it. The users are known from the containers' specs (their mount sources), so a restarted
// berthd finds them again without a record of its own. A pod with a user namespace of its own gets
// its volumes' layers id-mapped through that namespace, as containerd does (and as its rootfs
// is), below a pod dir that only root and the pod's root group can traverse.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "berth/container_manager.h"
#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

// The user namespace of a pod that has its own.
struct VolumeIdmap {
  int userns_fd = -1;
  uint32_t root_gid = 0;  // the pod's root group, on the host
};

class ImageVolumes {
 public:
  // `dir` must exist; it is used canonical, as the kernel names the paths resolved below it.
  ImageVolumes(const std::string& dir, ContainerImages& images);

  // The source of a container's mount: the pod's volume of `image_ref` (mounted on first use) or
  // `sub_path` in it, which must exist and may not leave it. `field` names the mount in errors.
  Result<std::string> attach(const std::string& pod_id, const std::string& container_id, const std::string& image_ref,
                             const std::string& sub_path, const std::string& field, const VolumeIdmap* idmap = nullptr);
  // The container no longer uses its volumes; one left without a user is unmounted and its
  // image released. Idempotent.
  Status detach(const std::string& container_id);
  // After a restart: each container's mount sources (from its bundle's spec). Volumes in use get
  // their image holds again; the others are unmounted and removed.
  void recover(const std::map<std::string, std::vector<std::string>>& sources_by_container);

  const std::string& dir() const { return dir_; }

 private:
  struct Volume {
    std::string image_id;
    std::set<std::string> users;
  };
  // Releases the image once unmounted (image_id cleared: released).
  Status unmount_locked(const std::string& path, Volume& v) BERTH_REQUIRES(mu_);

  std::string dir_;
  ContainerImages& images_;
  Mutex mu_;
  std::map<std::string, Volume> volumes_ BERTH_GUARDED_BY(mu_);  // by mount path
};

}  // namespace berth
