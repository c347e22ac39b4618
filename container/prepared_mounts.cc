// Host-side mounts for containers (see prepared_mounts.h). mount_setattr(2) with AT_RECURSIVE is
// the only way to make a whole mount tree read-only in one step; each mount's own flag then
// survives the runtime's rbind.
#include "berth/prepared_mounts.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "berth/container_mounts.h"
#include "berth/file_text.h"

namespace berth {

bool kernel_has_mount_setattr() {
  static const bool has = [] {
    mount_attr attr{};
    // Unknown flags are EINVAL on a kernel that has the call, ENOSYS on one that has not.
    return ::mount_setattr(-1, "", ~0u, &attr, sizeof attr) == 0 || errno != ENOSYS;
  }();
  return has;
}

RecursiveReadOnly recursive_read_only_mode(bool runtime_has_rro_option) {
  if (!kernel_has_mount_setattr()) return RecursiveReadOnly::unsupported;
  return runtime_has_rro_option ? RecursiveReadOnly::runtime_option : RecursiveReadOnly::host_prepared;
}

Status mount_recursive_read_only(const std::string& source, const std::string& target) {
  struct stat st {};
  if (::stat(source.c_str(), &st) != 0) return errno_status(errno, "recursive read-only mount: " + source);
  std::string parent = target.substr(0, target.rfind('/'));
  if (::mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + parent);
  // The copies hang below a private self-bind of their dir: berthd's state dir is under /run,
  // shared on systemd hosts, and a copy attached there would be propagated, writable, into every
  // namespace that receives /run's mounts, and outlive its release there.
  if (!is_private_mount_point(parent, read_text_file("/proc/self/mountinfo"))) {
    if (::mount(parent.c_str(), parent.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return errno_status(errno, "recursive read-only mount: bind " + parent + " on itself");
    if (::mount(nullptr, parent.c_str(), nullptr, MS_PRIVATE, nullptr) != 0) {
      Status s = errno_status(errno, "recursive read-only mount: make " + parent + " private");
      ::umount2(parent.c_str(), MNT_DETACH);
      return s;
    }
  }
  if (S_ISDIR(st.st_mode)) {
    if (::mkdir(target.c_str(), 0700) != 0 && errno != EEXIST) return errno_status(errno, "create mount point " + target);
  } else {
    int fd = ::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return errno_status(errno, "create mount point " + target);
    ::close(fd);
  }
  if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
    return errno_status(errno, "recursive read-only mount: bind " + source + " at " + target);
  Status s;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY;
  attr.propagation = MS_PRIVATE;
  if (::mount_setattr(AT_FDCWD, target.c_str(), AT_RECURSIVE | AT_SYMLINK_NOFOLLOW, &attr, sizeof attr) != 0)
    s = errno_status(errno, "recursive read-only mount: mount_setattr " + target);
  if (!s.ok()) ::umount2(target.c_str(), MNT_DETACH);
  return s;
}

Status release_prepared_mounts(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return errno == ENOENT ? ok_status() : errno_status(errno, "open " + dir);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (std::string n = e->d_name; n != "." && n != "..") names.push_back(n);
  ::closedir(d);
  for (const auto& n : names) {
    const std::string path = dir + "/" + n;
    // Detached: a process still holding a file open there does not keep the copy attached.
    if (::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL && errno != ENOENT)
      return errno_status(errno, "unmount " + path);
    if (::rmdir(path.c_str()) != 0 && errno == ENOTDIR) ::unlink(path.c_str());
  }
  // The private self-bind the copies hung below.
  if (::umount2(dir.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL && errno != ENOENT)
    return errno_status(errno, "unmount " + dir);
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove " + dir);
  return ok_status();
}

}  // namespace berth
