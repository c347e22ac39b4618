// Id-mapped mounts with the new mount API (open_tree, mount_setattr, move_mount; Linux 5.12, and
// id-mapped overlay layers from 5.19), through glibc's wrappers. runc 1.1 cannot make them, so
// berth makes them itself and hands the runtime plain paths.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "berth/user_namespace.h"

namespace berth {

namespace {

constexpr uint32_t kProbeHostId = 1000000;  // any id the probe's namespace can map container root to

}  // namespace

Status attach_idmapped_mount(const std::string& path, int userns_fd, const std::string& target, bool recursive) {
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0);
  UniqueFd tree(::open_tree(AT_FDCWD, path.c_str(), flags));
  if (!tree) return errno_status(errno, "id-mapped mount: open_tree " + path);
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_IDMAP;
  attr.userns_fd = static_cast<uint64_t>(userns_fd);
  if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr) != 0)
    return errno_status(errno, "id-mapped mount: mount_setattr(MOUNT_ATTR_IDMAP) on " + path +
                                   (errno == EINVAL ? " (its filesystem cannot be id-mapped)" : ""));
  if (::move_mount(tree.get(), "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
    return errno_status(errno, "id-mapped mount: attach " + path + " on " + target);
  return ok_status();
}

Status probe_idmapped_overlay(const std::string& scratch_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(scratch_dir, ec);
  for (const char* d : {"/lower", "/upper", "/work", "/mapped", "/merged"}) {
    fs::create_directories(scratch_dir + d, ec);
    if (ec) return Status(Code::internal, "mkdir " + scratch_dir + d + ": " + ec.message());
  }
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      ::umount2((dir + "/merged").c_str(), MNT_DETACH);
      ::umount2((dir + "/mapped").c_str(), MNT_DETACH);
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{scratch_dir};
  UniqueFd f(::open((scratch_dir + "/lower/file").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  if (!f || ::fchown(f.get(), 0, 0) != 0) return errno_status(errno, "create " + scratch_dir + "/lower/file");
  auto userns = make_user_namespace({{0, kProbeHostId, 65536}}, {{0, kProbeHostId, 65536}});
  if (!userns.ok()) return userns.status();
  if (Status s = attach_idmapped_mount(scratch_dir + "/lower", userns->get(), scratch_dir + "/mapped", false); !s.ok())
    return s;
  std::string opts =
      "lowerdir=" + scratch_dir + "/mapped,upperdir=" + scratch_dir + "/upper,workdir=" + scratch_dir + "/work";
  if (::mount("overlay", (scratch_dir + "/merged").c_str(), "overlay", 0, opts.c_str()) != 0)
    return errno_status(errno, "overlay over an id-mapped lower layer");
  // The overlay keeps its own reference to the layer: the attached id-mapped mount can go at once.
  if (::umount2((scratch_dir + "/mapped").c_str(), MNT_DETACH) != 0)
    return errno_status(errno, "detach the id-mapped layer");
  struct stat st {};
  if (::stat((scratch_dir + "/merged/file").c_str(), &st) != 0) return errno_status(errno, "stat through the overlay");
  if (st.st_uid != kProbeHostId)
    return Status(Code::failed_precondition, "a file of an id-mapped overlay layer shows uid " +
                                                 std::to_string(st.st_uid) + ", not the mapped " +
                                                 std::to_string(kProbeHostId));
  return ok_status();
}

}  // namespace berth
