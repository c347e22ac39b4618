// See user_namespace.h. The namespaces are made by a child cloned straight into them (clone with
// CLONE_NEWUSER works from a multi-threaded process, unshare does not); the child only blocks on a
// pipe until berthd has written its maps and pinned what it needs, then exits. Writing the maps
// from berthd (root outside) needs no setgroups "deny", so the pod's root keeps setgroups.
#include "berth/user_namespace.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth/rollback.h"

namespace berth {

namespace {

constexpr size_t kMaxMapLines = 340;  // the kernel's limit per uid_map/gid_map

bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) { return a < b + blen && b < a + alen; }

// A child cloned into new namespaces (`flags`), waiting until released; reaped on destruction.
class NamespaceChild {
 public:
  static Result<NamespaceChild> clone_into(int flags) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return errno_status(errno, "user namespace: pipe");
    UniqueFd rd(p[0]), wr(p[1]);
    // Fork-like clone (no new stack, no atfork handlers): the child makes raw system calls only,
    // since a sanitizer's interceptors may want locks another thread of berthd held at the clone.
    long pid = ::syscall(SYS_clone, static_cast<unsigned long>(flags) | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid < 0) return errno_status(errno, "user namespace: clone");
    if (pid == 0) {
      ::syscall(SYS_close, wr.get());  // its copy of the write end would keep it from ever seeing EOF
      char c;
      while (::syscall(SYS_read, rd.get(), &c, 1) < 0 && errno == EINTR) {
      }
      ::syscall(SYS_exit_group, 0);
    }
    NamespaceChild child;
    child.pid_ = static_cast<pid_t>(pid);
    child.release_ = std::move(wr);
    return child;
  }
  NamespaceChild() = default;
  NamespaceChild(NamespaceChild&& o) noexcept : pid_(std::exchange(o.pid_, 0)), release_(std::move(o.release_)) {}
  NamespaceChild& operator=(NamespaceChild&&) = delete;
  ~NamespaceChild() {
    if (pid_ <= 0) return;
    release_.reset();  // the child reads EOF and exits
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  std::string ns(const char* which) const { return "/proc/" + std::to_string(pid_) + "/ns/" + which; }

  Status write_maps(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids) const {
    for (auto [file, ids] : {std::pair{"uid_map", &uids}, {"gid_map", &gids}}) {
      std::string path = "/proc/" + std::to_string(pid_) + "/" + file;
      UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
      if (!fd) return errno_status(errno, "user namespace: open " + path);
      std::string text = id_map_text(*ids);
      // The kernel takes a map in one write only.
      if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        return errno_status(errno, std::string("user namespace: write ") + file + " '" + text + "'");
    }
    return ok_status();
  }

 private:
  pid_t pid_ = 0;
  UniqueFd release_;
};

Status pin(const std::string& ns_file, const std::string& pin_path) {
  UniqueFd f(::open(pin_path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
  if (!f) return errno_status(errno, "pin namespace: create " + pin_path);
  f.reset();
  if (::mount(ns_file.c_str(), pin_path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    Status st = errno_status(errno, "pin namespace: bind mount " + ns_file + " on " + pin_path);
    ::unlink(pin_path.c_str());
    return st;
  }
  return ok_status();
}

}  // namespace

Status validate_id_mappings(const std::vector<IdMapping>& ids, const std::string& field, bool allow_host_root) {
  if (ids.empty()) return invalid_argument(field + ": no mapping given (container id 0 must be mapped)");
  if (ids.size() > kMaxMapLines)
    return invalid_argument(field + ": " + std::to_string(ids.size()) + " mappings, more than the kernel's " +
                            std::to_string(kMaxMapLines));
  bool root = false;
  for (size_t i = 0; i < ids.size(); ++i) {
    const IdMapping& m = ids[i];
    std::string at = field + "[" + std::to_string(i) + "]";
    if (m.length == 0) return invalid_argument(at + ": length is 0");
    if (uint64_t(m.container_id) + m.length > (1ull << 32) || uint64_t(m.host_id) + m.length > (1ull << 32))
      return invalid_argument(at + ": " + std::to_string(m.length) + " ids from container id " +
                              std::to_string(m.container_id) + " or host id " + std::to_string(m.host_id) +
                              " run past 2^32");
    if (!allow_host_root && m.host_id == 0)
      return invalid_argument(at +
                              ": maps host id 0 (root on the node) into the pod; a user namespace must leave it out");
    if (m.container_id == 0) root = true;
    for (size_t j = 0; j < i; ++j) {
      if (overlaps(m.container_id, m.length, ids[j].container_id, ids[j].length))
        return invalid_argument(at + ": container ids overlap those of " + field + "[" + std::to_string(j) + "]");
      if (overlaps(m.host_id, m.length, ids[j].host_id, ids[j].length))
        return invalid_argument(at + ": host ids overlap those of " + field + "[" + std::to_string(j) + "]");
    }
  }
  if (!root) return invalid_argument(field + ": container id 0 is not mapped");
  return ok_status();
}

bool map_to_host(const std::vector<IdMapping>& ids, uint32_t id, uint32_t* host) {
  for (const IdMapping& m : ids)
    if (id >= m.container_id && uint64_t(id) < uint64_t(m.container_id) + m.length) {
      *host = m.host_id + (id - m.container_id);
      return true;
    }
  return false;
}

std::string id_map_text(const std::vector<IdMapping>& ids) {
  std::string out;
  for (const IdMapping& m : ids)
    out += std::to_string(m.container_id) + " " + std::to_string(m.host_id) + " " + std::to_string(m.length) + "\n";
  return out;
}

Result<UniqueFd> make_user_namespace(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids) {
  auto child = NamespaceChild::clone_into(CLONE_NEWUSER);
  if (!child.ok()) return child.status();
  if (Status s = child->write_maps(uids, gids); !s.ok()) return s;
  UniqueFd fd(::open(child->ns("user").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_status(errno, "user namespace: open " + child->ns("user"));
  return fd;
}

Status create_pinned_user_and_net_ns(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids,
                                     const std::string& userns_pin, const std::string& netns_pin) {
  // Both at once: the kernel makes the user namespace first, so it owns the network namespace.
  auto child = NamespaceChild::clone_into(CLONE_NEWUSER | CLONE_NEWNET);
  if (!child.ok()) return child.status();
  if (Status s = child->write_maps(uids, gids); !s.ok()) return s;
  if (Status s = pin(child->ns("user"), userns_pin); !s.ok()) return s;
  if (Status s = pin(child->ns("net"), netns_pin); !s.ok()) {
    // The error to report is the pin's; an unpin that fails too is logged with its step.
    Rollback undo("user namespace " + userns_pin);
    undo.add("unpin user namespace", [&] { return remove_namespace_pin(userns_pin); });
    return s;
  }
  return ok_status();
}

Status create_pinned_user_ns(const std::vector<IdMapping>& uids, const std::vector<IdMapping>& gids,
                             const std::string& userns_pin) {
  auto child = NamespaceChild::clone_into(CLONE_NEWUSER);
  if (!child.ok()) return child.status();
  if (Status s = child->write_maps(uids, gids); !s.ok()) return s;
  return pin(child->ns("user"), userns_pin);
}

Status remove_namespace_pin(const std::string& path) {
  if (path.empty()) return ok_status();
  if (::umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    return errno_status(errno, "unpin namespace " + path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "remove namespace pin " + path);
  return ok_status();
}

}  // namespace berth
