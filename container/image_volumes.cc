// ImageVolumes (see image_volumes.h). A sub path is opened beneath the volume with openat2
// (RESOLVE_BENEATH: no absolute symlink, no "..", no escape) and the runtime is given the path
// the kernel resolved, so no symlink in the image is ever followed on the host by the runtime.
#include "image_volumes.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "berth/container_mounts.h"
#include "berth/container_rootfs.h"
#include "berth/file_tree.h"
#include "berth/image_manager.h"
#include "berth/layer_mount.h"
#include "berth/mutex.h"
#include "berth/prepared_mounts.h"
#include "berth/unique_fd.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

Result<std::string> resolve_sub_path(const std::string& volume, const std::string& sub_path, const std::string& field) {
  if (sub_path.empty()) return volume;
  UniqueFd root(::open(volume.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return errno_status(errno, field + ": open image volume " + volume);
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  std::string rel = sub_path;
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, root.get(), rel.c_str(), &how, sizeof how)));
  if (!fd) {
    int e = errno;
    if (e == EXDEV || e == ELOOP)
      return invalid_argument(field + ".image_sub_path: '" + sub_path + "' leaves the image");
    if (e == ENOENT || e == ENOTDIR)
      return invalid_argument(field + ".image_sub_path: '" + sub_path + "' does not exist in the image");
    return errno_status(e, field + ".image_sub_path: " + sub_path);
  }
  std::error_code ec;
  std::string real = fs::read_symlink("/proc/self/fd/" + std::to_string(fd.get()), ec);
  if (ec || !path_under(real, volume))
    return invalid_argument(field + ".image_sub_path: '" + sub_path + "' leaves the image");
  return real;
}

// The pod's dir: root's alone, or, for a pod with its own user namespace (whose runtime reaches the
// volumes as the pod's root), root's and the pod's root group's: no other user on the node gets in.
Status make_pod_dir(const std::string& dir, const VolumeIdmap* idmap) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + dir);
  if (!idmap) return ok_status();
  const std::string volumes = dir.substr(0, dir.rfind('/'));
  if (::chmod(volumes.c_str(), 0711) != 0) return errno_status(errno, "chmod 0711 " + volumes);
  if (::chown(dir.c_str(), 0, idmap->root_gid) != 0) return errno_status(errno, "chown " + dir);
  if (::chmod(dir.c_str(), 0710) != 0) return errno_status(errno, "chmod 0710 " + dir);
  return ok_status();
}

// The volume at `path`: the layers read-only, or, with `idmap`, copies of them id-mapped through the
// pod's namespace (staged beside it, and let go once the volume's mount holds them).
Status mount_volume(const std::vector<std::string>& layers, const std::string& path, const VolumeIdmap* idmap) {
  if (!idmap || layers.empty()) return mount_layers_read_only(layers, path);
  const std::string staging = path.substr(0, path.rfind('/')) + "/.idmap-" + path.substr(path.rfind('/') + 1);
  auto copies = attach_idmapped_layers(layers, idmap->userns_fd, staging);
  Status mounted = copies.ok() ? mount_layers_read_only(*copies, path) : copies.status();
  if (Status s = release_prepared_mounts(staging); !s.ok())
    spdlog::warn("containers: image volume {}: {}", path, s.message());
  return mounted;
}

}  // namespace

ImageVolumes::ImageVolumes(const std::string& dir, ContainerImages& images) : images_(images) {
  std::error_code ec;
  dir_ = fs::canonical(dir, ec);
  if (ec) dir_ = dir;
}

Result<std::string> ImageVolumes::attach(const std::string& pod_id, const std::string& container_id,
                                         const std::string& image_ref, const std::string& sub_path,
                                         const std::string& field, const VolumeIdmap* idmap) {
  if (image_ref.empty()) return invalid_argument(field + ".image.image: must not be empty");
  MutexLock lock(mu_);
  auto held = images_.acquire(image_ref);
  if (!held.ok()) return not_found(field + ".image: image " + image_ref + " not found (pull it first)");
  const ImageRecord& image = held->record();
  std::string hex = image.id.substr(image.id.find(':') + 1);
  std::string path = dir_ + "/" + pod_id + "/" + hex;
  auto it = volumes_.find(path);
  if (it != volumes_.end() && it->second.image_id.empty()) {
    // Unmounted already (a release whose rmdir failed): mounted again below.
    if (!it->second.users.empty()) return internal_error(field + ".image: the volume " + path + " is being released");
    volumes_.erase(it);
    it = volumes_.end();
  }
  if (it == volumes_.end()) {
    if (Status s = make_pod_dir(dir_ + "/" + pod_id, idmap); !s.ok()) return s.context(field + ".image");
    if (Status s = mount_volume(images_.snapshot_dirs(image), path, idmap); !s.ok()) return s.context(field + ".image");
    it = volumes_.emplace(path, Volume{image.id, {}}).first;
    (void)std::move(*held).keep();  // the volume holds the image from here
  }
  auto source = resolve_sub_path(path, sub_path, field);
  if (!source.ok()) {
    if (it->second.users.empty()) {
      if (Status s = unmount_locked(path, it->second); !s.ok())
        spdlog::warn("containers: {}", s.message());
      else
        volumes_.erase(it);
    }
    return source.status();
  }
  it->second.users.insert(container_id);
  return source;
}

Status ImageVolumes::unmount_locked(const std::string& path, Volume& v) {
  if (::umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    return errno_status(errno, "unmount image volume " + path);
  // Unmounted: the image is no longer in use, whatever happens to the empty dir.
  if (!v.image_id.empty()) images_.release(v.image_id);
  v.image_id.clear();
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove image volume " + path);
  ::rmdir(path.substr(0, path.rfind('/')).c_str());  // the pod's dir, once empty
  return ok_status();
}

Status ImageVolumes::detach(const std::string& container_id) {
  MutexLock lock(mu_);
  Status first;
  for (auto it = volumes_.begin(); it != volumes_.end();) {
    Volume& v = it->second;
    if (!v.users.count(container_id)) {
      ++it;
      continue;
    }
    if (v.users.size() > 1) {
      v.users.erase(container_id);
      ++it;
      continue;
    }
    // The last user stays one until the volume is gone, so a failed unmount is retried by the
    // next RemoveContainer of the same container.
    if (Status s = unmount_locked(it->first, v); !s.ok()) {
      if (first.ok()) first = s;
      ++it;
      continue;
    }
    it = volumes_.erase(it);
  }
  return first;
}

void ImageVolumes::recover(const std::map<std::string, std::vector<std::string>>& sources_by_container) {
  MutexLock lock(mu_);
  std::error_code ec;
  for (const auto& pod : fs::directory_iterator(dir_, ec)) {
    for (const auto& vol : fs::directory_iterator(pod.path(), ec)) {
      const std::string path = vol.path();
      if (vol.path().filename().string().rfind(".idmap-", 0) == 0) {  // layer copies a crash left staged
        if (Status s = release_prepared_mounts(path); !s.ok())
          spdlog::warn("containers: leftover {}: {}", path, s.message());
        continue;
      }
      Volume v{"sha256:" + vol.path().filename().string(), {}};
      for (const auto& [id, sources] : sources_by_container)
        for (const auto& s : sources)
          if (path_under(s, path)) v.users.insert(id);
      if (v.users.empty()) {
        // No container uses it: nothing held it since the restart, so nothing is released.
        v.image_id.clear();
        if (Status s = unmount_locked(path, v); !s.ok())
          spdlog::warn("containers: leftover image volume {}: {}", path, s.message());
        else
          spdlog::info("containers: removed leftover image volume {} of no known container", path);
        continue;
      }
      images_.hold(v.image_id);
      volumes_.emplace(path, std::move(v));
    }
  }
}

}  // namespace berth
