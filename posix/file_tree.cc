// See file_tree.h. One DIR stream is open at a time: going down, the parent's stream is closed
// (the usage walk remembers its telldir position to resume there); going up, the parent is opened
// again through "..", and its device and inode must be those recorded on the way down.
#include "berth/file_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

namespace berth {
namespace {

// A bind mount of a dir on the same filesystem has the same st_dev: only statx tells it apart.
bool is_mount_root(int dir_fd, const char* name) {
  struct statx sx {};
  if (::statx(dir_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &sx) != 0) return false;
  return (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

bool is_dot(const char* n) { return n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0)); }

struct Level {
  dev_t dev;
  ino_t ino;
  long resume = 0;   // telldir() after the entry we went down into (usage walk)
  std::string name;  // its name in the parent (removal)
};

class DirStream {
 public:
  DirStream() = default;
  ~DirStream() { reset(); }
  DirStream(const DirStream&) = delete;
  DirStream& operator=(const DirStream&) = delete;
  // Takes the fd (closes it on failure).
  bool open(int fd) {
    reset();
    d_ = ::fdopendir(fd);
    if (!d_) ::close(fd);
    return d_ != nullptr;
  }
  void reset() {
    if (d_) ::closedir(d_);
    d_ = nullptr;
  }
  DIR* get() const { return d_; }
  int fd() const { return ::dirfd(d_); }

 private:
  DIR* d_ = nullptr;
};

// Opens the directory `name` below `dirfd` and checks it is (dev, ino), the one a stat saw or the
// walk left; -1 with errno ESTALE when another took its place meanwhile.
int open_dir_checked(int dirfd, const char* name, dev_t dev, ino_t ino) {
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
    ::close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

// Opens the parent of the open directory and checks it is `expected`; the caller then drops the child.
int open_parent(const DirStream& child, const Level& expected) {
  return open_dir_checked(child.fd(), "..", expected.dev, expected.ino);
}

constexpr size_t kMaxHardLinksRemembered = 1 << 20;

}  // namespace

Result<DiskUsage> measure_disk_usage(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno_status(errno, "measure disk usage of " + dir, errno == ENOENT ? Code::not_found : Code::internal);
  struct stat top {};
  if (::fstat(fd, &top) != 0) {
    int err = errno;
    ::close(fd);
    return errno_status(err, "stat " + dir);
  }
  DiskUsage usage;
  std::set<std::pair<dev_t, ino_t>> linked;
  auto count = [&](const struct stat& st) {
    if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && linked.size() < kMaxHardLinksRemembered &&
        !linked.emplace(st.st_dev, st.st_ino).second)
      return;
    usage.inodes++;
    usage.bytes += static_cast<uint64_t>(st.st_blocks) * 512;
  };
  count(top);
  DirStream d;
  if (!d.open(fd)) return errno_status(errno, "read " + dir);
  std::vector<Level> path{{top.st_dev, top.st_ino}};
  for (;;) {
    errno = 0;
    dirent* e = ::readdir(d.get());
    if (e) {
      if (is_dot(e->d_name)) continue;
      struct stat st {};
      if (::fstatat(d.fd(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != top.st_dev) continue;
      count(st);
      if (!S_ISDIR(st.st_mode)) continue;
      int child = open_dir_checked(d.fd(), e->d_name, st.st_dev, st.st_ino);
      if (child < 0) continue;  // gone, or swapped between the stat and the open
      path.back().resume = ::telldir(d.get());
      path.push_back({st.st_dev, st.st_ino});
      if (!d.open(child)) return errno_status(errno, "read a directory below " + dir);
      continue;
    }
    if (path.size() == 1) return usage;
    path.pop_back();
    int parent = open_parent(d, path.back());
    if (parent < 0)
      return errno_status(errno, "measure disk usage of " + dir + ": the tree changed during the walk",
                          Code::failed_precondition);
    if (!d.open(parent)) return errno_status(errno, "read a directory below " + dir);
    ::seekdir(d.get(), path.back().resume);
  }
}

Status remove_tree(const std::string& path) {
  struct stat top {};
  if (::lstat(path.c_str(), &top) != 0) return errno == ENOENT ? ok_status() : errno_status(errno, "remove " + path);
  if (!S_ISDIR(top.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove " + path);
    return ok_status();
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? ok_status() : errno_status(errno, "remove " + path);
  DirStream d;
  if (!d.open(fd)) return errno_status(errno, "remove " + path);
  std::vector<Level> stack{{top.st_dev, top.st_ino, 0, ""}};
  auto where = [&](const char* name) {
    std::string p = path;
    // Deep trees make long paths: name the first levels and the entry.
    for (size_t i = 1; i < stack.size() && i < 8; ++i) p += "/" + stack[i].name;
    if (stack.size() > 8) p += "/...";
    return p + "/" + name;
  };
  for (;;) {
    errno = 0;
    dirent* e = ::readdir(d.get());
    if (e) {
      if (is_dot(e->d_name)) continue;
      struct stat st {};
      if (::fstatat(d.fd(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;
        return errno_status(errno, "remove " + where(e->d_name));
      }
      if (!S_ISDIR(st.st_mode)) {
        if (::unlinkat(d.fd(), e->d_name, 0) != 0 && errno != ENOENT)
          return errno_status(errno, "remove " + where(e->d_name));
        continue;
      }
      if (st.st_dev != top.st_dev || is_mount_root(d.fd(), e->d_name))
        return Status(Code::failed_precondition,
                      "remove " + path + ": " + where(e->d_name) + " is a mount point; not crossing it");
      int child = open_dir_checked(d.fd(), e->d_name, st.st_dev, st.st_ino);
      if (child < 0 && errno == ENOENT) continue;
      if (child < 0 && errno == ESTALE)
        return Status(Code::failed_precondition, "remove " + where(e->d_name) + ": it changed during the removal");
      if (child < 0) return errno_status(errno, "remove " + where(e->d_name));
      stack.push_back({st.st_dev, st.st_ino, 0, e->d_name});
      if (!d.open(child)) return errno_status(errno, "remove " + where(""));
      continue;
    }
    if (errno != 0) return errno_status(errno, "read " + where(""));
    if (stack.size() == 1) break;
    Level done = stack.back();
    stack.pop_back();
    int parent = open_parent(d, stack.back());
    if (parent < 0)
      return errno_status(errno, "remove " + path + ": the tree changed during the removal", Code::failed_precondition);
    d.reset();
    if (::unlinkat(parent, done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      int err = errno;
      ::close(parent);
      return errno_status(err, "remove " + where(done.name.c_str()));
    }
    // A fresh stream reads the parent from its start: what is left there is still to remove.
    if (!d.open(parent)) return errno_status(errno, "remove " + where(""));
  }
  d.reset();
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove " + path);
  return ok_status();
}

}  // namespace berth
