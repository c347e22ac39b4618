// Host-side mounts for containers (see prepared_mounts.h). mount_setattr(2) with AT_RECURSIVE is
// the only way to make a whole mount tree read-only in one step, and MOUNT_ATTR_IDMAP the only
// way to id-map one; each mount's own flag and idmap then survive the runtime's rbind.
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

RecursiveReadOnly recursive_read_only_mode(const HandlerFeatures& handler) {
  if (!handler.rro_copy) return RecursiveReadOnly::unsupported;
  return handler.rro_option ? RecursiveReadOnly::runtime_option : RecursiveReadOnly::host_prepared;
}

Status make_private_mount_dir(const std::string& dir, mode_t mode) {
  const bool made = ::mkdir(dir.c_str(), mode) == 0;
  if (!made && errno != EEXIST) return errno_status(errno, "mkdir " + dir);
  // Only a dir that was there already (a retry, a crash's leftover) can be the self-bind: a new
  // one spares the read of a mountinfo that grows with the node's pods.
  if (!made && is_private_mount_point(dir, read_text_file("/proc/self/mountinfo"))) return ok_status();
  if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0)
    return errno_status(errno, "bind " + dir + " on itself");
  if (::mount(nullptr, dir.c_str(), nullptr, MS_PRIVATE, nullptr) != 0) {
    Status s = errno_status(errno, "make " + dir + " private");
    ::umount2(dir.c_str(), MNT_DETACH);
    return s;
  }
  return ok_status();
}

namespace {

Status make_mount_point(const std::string& source, const std::string& target) {
  struct stat st {};
  if (::stat(source.c_str(), &st) != 0) return errno_status(errno, "stat " + source);
  if (S_ISDIR(st.st_mode)) {
    if (::mkdir(target.c_str(), 0700) != 0 && errno != EEXIST)
      return errno_status(errno, "create mount point " + target);
    return ok_status();
  }
  int fd = ::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status(errno, "create mount point " + target);
  ::close(fd);
  return ok_status();
}

// The user namespaces of one container's id-mapped copies, each opened or made once.
class IdmapNamespaces {
 public:
  explicit IdmapNamespaces(const PodIdmap& pod) : pod_(pod) {}

  Result<int> fd_for(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids) {
    for (const auto& [u, g, fd] : made_)
      if (u == uids && g == gids) return fd.get();
    UniqueFd fd;
    if (!pod_.pod_userns_path.empty() && uids == pod_.uids && gids == pod_.gids) {
      fd = UniqueFd(::open(pod_.pod_userns_path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd) return errno_status(errno, "open the pod's user namespace " + pod_.pod_userns_path);
    } else {
      auto made = make_user_namespace(uids, gids);
      if (!made.ok()) return made.status();
      fd = std::move(*made);
    }
    made_.push_back({uids, gids, std::move(fd)});
    return made_.back().fd.get();
  }

 private:
  struct Entry {
    std::vector<IdMapping> uids, gids;
    UniqueFd fd;
  };
  const PodIdmap& pod_;
  std::vector<Entry> made_;
};

Status prepare_mount(const PreparedMount& m, IdmapNamespaces& namespaces) {
  if (Status s = make_mount_point(m.source, m.target); !s.ok()) return s;
  if (!m.uids.empty()) {
    auto fd = namespaces.fd_for(m.uids, m.gids);
    if (!fd.ok()) return fd.status();
    // Recursive, as the runtime's rbind of a volume is: every mount below the source comes along,
    // each id-mapped (a filesystem that cannot be is an error naming the source, not a gap).
    if (Status s = attach_idmapped_mount(m.source, *fd, m.target, true); !s.ok()) return s;
  } else if (::mount(m.source.c_str(), m.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    return errno_status(errno, "bind " + m.source + " at " + m.target);
  }
  // A copy, like a bind, joins the peer groups of the source's shared mounts: private, nothing the
  // host mounts later appears in it un-mapped, and detaching it cannot unmount the host's mounts
  // below the source.
  if (::mount(nullptr, m.target.c_str(), nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return errno_status(errno, "make the copy " + m.target + " private");
  if (!m.read_only) return ok_status();
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY;
  attr.propagation = MS_PRIVATE;
  if (::mount_setattr(AT_FDCWD, m.target.c_str(), AT_RECURSIVE | AT_SYMLINK_NOFOLLOW, &attr, sizeof attr) != 0)
    return errno_status(errno, "make every mount of " + m.target + " read-only (mount_setattr)");
  return ok_status();
}

}  // namespace

Status prepare_mounts(const std::vector<PreparedMount>& mounts, const PodIdmap& pod) {
  if (mounts.empty()) return ok_status();
  // Every copy hangs in the same dir (<bundle>/mounts): made private once, one read of mountinfo.
  // 0711: in a pod with a user namespace the runtime reaches the copies as the pod's root. The
  // bundle above is what keeps everyone else out: 0700, or 0710 for the pod's root group alone.
  const std::string& first = mounts.front().target;
  if (Status s = make_private_mount_dir(first.substr(0, first.rfind('/')), 0711); !s.ok())
    return s.context("prepare host copies");
  IdmapNamespaces namespaces(pod);
  for (const PreparedMount& m : mounts)
    if (Status s = prepare_mount(m, namespaces); !s.ok())
      return s.context((m.field.empty() ? "" : m.field + ": ") + "prepare the host copy of " + m.source);
  return ok_status();
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
    // Private first (a copy left by a crash before it was made private), so that the detach is
    // not propagated to the host's mounts below its source.
    if (::mount(nullptr, path.c_str(), nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 && errno != EINVAL &&
        errno != ENOENT)
      return errno_status(errno, "make " + path + " private");
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
