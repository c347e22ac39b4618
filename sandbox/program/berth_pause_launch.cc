// berth-pause-launch: starts a pod's berth-pause without an OCI runtime (runc's create and start
// cost two Go start-ups per pod for a process that only sleeps). berthd made the pause's cgroup
// and derived every argument from the pause's OCI spec (pause_launch.cc); this program does what
// the runtime would with that spec, in the runtime's order:
//   join the cgroup (cgroup.procs files), set the OOM score, join the pod's user namespace when it
//   has one (and become its root), join the pod's network namespace, unshare the others
//   (mount, IPC, UTS, PID, cgroup), set the namespaced sysctls and the hostname, fork into the
//   new PID namespace; the child mounts /proc, /dev (tmpfs, devpts, the pod's /dev/shm, mqueue)
//   and /sys read-only under the pause rootfs, masks and write-protects the spec's paths, pivots
//   into the rootfs and makes it read-only (keeping the flags a user namespace locks), sets the
//   groups and ids, drops every capability (the bounding set too), sets no_new_privs, loads the
//   seccomp program (stdin) and execs /pause.
// Arguments: --rootfs P --shm P [--sys P] [--userns P] [--netns P] [--hostname H] [--new NS]... [--sysctl K=V]...
//   [--cgroup-procs P]... [--cgroup-wait FD] [--mask P]... [--readonly P]... --uid N --gid N [--group N]...
//   --oom N -- ARGS...   Report on fd 3: "pid N" (the pause, in berthd's PID namespace) or "error ...".
// --cgroup-wait 3 (the systemd cgroup driver): berthd asks systemd for the pause's scope with this
// process in it, so instead of joining cgroups it waits for berthd's "1" on fd 3 (end of file:
// the scope was not made) at the same step. The scope denies every device from the moment it
// exists, which may be before this program has run a line, so /dev/null comes from berthd as
// fd 4; the report then goes to fd 5.
// Static and free of C++ library code, like berth-exec.
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth/helper_process_steps.h"
#include "berth/inherited_fds.h"

namespace {

using namespace berth::helper_steps;

constexpr int kReport = 3;
constexpr int kMaxList = 64;
constexpr int kFailed = 125;

struct List {
  const char* items[kMaxList];
  int n = 0;
};

struct Options {
  const char *rootfs = nullptr, *shm = nullptr, *userns = nullptr, *netns = nullptr, *hostname = nullptr;
  const char* sys = nullptr;  // bound read-only on /sys instead of a sysfs mount (the node's network)
  int new_ns = 0;
  List sysctls, cgroup_procs, masks, readonly;
  unsigned uid = 0, gid = 0;
  List groups;
  const char* oom = nullptr;
  char** args = nullptr;
} opt;

sock_filter filter[BPF_MAXINSNS];
size_t filter_len = 0;
int exec_status_fd = -1;
int report_fd = kReport;
int cgroup_wait_fd = -1;

[[noreturn]] void fail(const char* what, int err) {
  char line[1024];
  int n = err ? snprintf(line, sizeof line, "error %s: %s\n", what, strerror(err))
              : snprintf(line, sizeof line, "error %s\n", what);
  int fd = exec_status_fd >= 0 ? exec_status_fd : report_fd;
  if (n > 0) (void)!write(fd, line, static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
  _exit(kFailed);
}

void add(List& l, const char* v) {
  if (l.n == kMaxList) fail("too many list arguments", 0);
  l.items[l.n++] = v;
}

int namespace_flag(const char* name) {
  if (!strcmp(name, "mount")) return CLONE_NEWNS;
  if (!strcmp(name, "ipc")) return CLONE_NEWIPC;
  if (!strcmp(name, "uts")) return CLONE_NEWUTS;
  if (!strcmp(name, "pid")) return CLONE_NEWPID;
  if (!strcmp(name, "cgroup")) return CLONE_NEWCGROUP;
  fail("unknown namespace", EINVAL);
}

void parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strcmp(a, "--")) {
      opt.args = argv + i + 1;
      break;
    }
    if (i + 1 >= argc) fail("an option without its value", EINVAL);
    const char* v = argv[++i];
    if (!strcmp(a, "--rootfs"))
      opt.rootfs = v;
    else if (!strcmp(a, "--shm"))
      opt.shm = v;
    else if (!strcmp(a, "--sys"))
      opt.sys = v;
    else if (!strcmp(a, "--userns"))
      opt.userns = v;
    else if (!strcmp(a, "--netns"))
      opt.netns = v;
    else if (!strcmp(a, "--hostname"))
      opt.hostname = v;
    else if (!strcmp(a, "--new"))
      opt.new_ns |= namespace_flag(v);
    else if (!strcmp(a, "--sysctl"))
      add(opt.sysctls, v);
    else if (!strcmp(a, "--cgroup-procs"))
      add(opt.cgroup_procs, v);
    else if (!strcmp(a, "--cgroup-wait")) {
      if (strcmp(v, "3") != 0) fail("--cgroup-wait takes fd 3", EINVAL);
      cgroup_wait_fd = kReport;
      report_fd = kReport + 2;
    } else if (!strcmp(a, "--mask"))
      add(opt.masks, v);
    else if (!strcmp(a, "--readonly"))
      add(opt.readonly, v);
    else if (!strcmp(a, "--uid"))
      opt.uid = static_cast<unsigned>(strtoul(v, nullptr, 10));
    else if (!strcmp(a, "--gid"))
      opt.gid = static_cast<unsigned>(strtoul(v, nullptr, 10));
    else if (!strcmp(a, "--group"))
      add(opt.groups, v);
    else if (!strcmp(a, "--oom"))
      opt.oom = v;
    else
      fail("unknown option", EINVAL);
  }
  if (!opt.rootfs || !opt.shm || !opt.args || !opt.args[0] || !(opt.new_ns & CLONE_NEWNS))
    fail("missing arguments", EINVAL);
}

void read_filter() {
  size_t got = 0;
  char* buf = reinterpret_cast<char*>(filter);
  for (;;) {
    ssize_t n = read(0, buf + got, sizeof filter - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read the seccomp program", errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got == sizeof filter) fail("seccomp program too long", 0);
  }
  if (got % sizeof(sock_filter) != 0) fail("seccomp program not whole instructions", 0);
  filter_len = got / sizeof(sock_filter);
}

// "net.ipv4.ip_forward=1" to /proc/sys/net/ipv4/ip_forward (of the namespaces joined so far).
void set_sysctl(const char* kv) {
  const char* eq = strchr(kv, '=');
  if (!eq || eq == kv) fail("malformed sysctl", EINVAL);
  char path[512];
  size_t klen = static_cast<size_t>(eq - kv);
  if (klen + 10 >= sizeof path) fail("sysctl name too long", EINVAL);
  memcpy(path, "/proc/sys/", 10);
  for (size_t i = 0; i < klen; ++i) path[10 + i] = kv[i] == '.' ? '/' : kv[i];
  path[10 + klen] = '\0';  // every '.' became '/': no ".." can climb out of /proc/sys
  if (!write_file(path, eq + 1)) fail(path, errno);
}

void mount_at(const char* src, const char* rel, const char* type, unsigned long flags, const char* data) {
  char target[4096];
  snprintf(target, sizeof target, "%s%s", opt.rootfs, rel);
  mkdir(target, 0755);
  if (mount(src, target, type, flags, data) != 0) fail(target, errno);
}

// Masked: /dev/null over a file, an empty read-only tmpfs over a directory; absent paths skipped.
void mask(const char* rel) {
  char target[4096];
  snprintf(target, sizeof target, "%s%s", opt.rootfs, rel);
  struct stat st;
  if (stat(target, &st) != 0) return;
  int rc = S_ISDIR(st.st_mode) ? mount("tmpfs", target, "tmpfs", MS_RDONLY, "size=0")
                               : mount("/dev/null", target, nullptr, MS_BIND, nullptr);
  if (rc != 0) fail(target, errno);
}

void write_protect(const char* rel) {
  char target[4096];
  snprintf(target, sizeof target, "%s%s", opt.rootfs, rel);
  struct stat st;
  if (stat(target, &st) != 0) return;
  if (mount(target, target, nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
      mount(target, target, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    fail(target, errno);
}

// The pause: in the new namespaces (pid 1 of its own PID namespace unless the pod shares the
// host's), still root with every capability until the end.
[[noreturn]] void become_pause(int devnull) {
  // Its own session, with no fd of the launcher's caller (berthd waits for their end).
  if (setsid() < 0) fail("setsid", errno);
  for (int fd = 0; fd < 3; ++fd)
    if (dup2(devnull, fd) < 0) fail("stdio", errno);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail("make mounts private", errno);
  if (mount(opt.rootfs, opt.rootfs, nullptr, MS_BIND | MS_REC, nullptr) != 0) fail("bind the rootfs", errno);
  const unsigned long hard = MS_NOSUID | MS_NOEXEC | MS_NODEV;
  mount_at("proc", "/proc", "proc", hard, nullptr);
  mount_at("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_STRICTATIME, "mode=755,size=65536k");
  mount_at("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620");
  mount_at(opt.shm, "/dev/shm", nullptr, MS_BIND | MS_REC, nullptr);
  if (opt.new_ns & CLONE_NEWIPC) mount_at("mqueue", "/dev/mqueue", "mqueue", hard, nullptr);
  if (opt.sys) {
    // The node's network namespace is not the pod's user namespace's: the kernel refuses a sysfs
    // mount there, as the runtime then binds the node's (read-only; the flags its mount has in
    // the pod's user namespace are locked and kept).
    mount_at(opt.sys, "/sys", nullptr, MS_BIND | MS_REC, nullptr);
    char target[4096];
    snprintf(target, sizeof target, "%s/sys", opt.rootfs);
    if (mount(nullptr, target, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | hard, nullptr) != 0) fail(target, errno);
  } else {
    mount_at("sysfs", "/sys", "sysfs", hard | MS_RDONLY, nullptr);
  }
  for (int i = 0; i < opt.masks.n; ++i) mask(opt.masks.items[i]);
  for (int i = 0; i < opt.readonly.n; ++i) write_protect(opt.readonly.items[i]);
  if (chdir(opt.rootfs) != 0) fail("chdir to the rootfs", errno);
  if (syscall(SYS_pivot_root, ".", ".") != 0) fail("pivot_root", errno);
  if (umount2(".", MNT_DETACH) != 0) fail("detach the old root", errno);
  if (chdir("/") != 0) fail("chdir /", errno);
  // A remount must keep nosuid, nodev and noexec where the rootfs's mount has them: in a user
  // namespace of the pod's own they are locked, and dropping them is refused. (The atime flags,
  // locked too, are kept by the kernel on a remount that names none.)
  struct statvfs root;
  if (statvfs("/", &root) != 0) fail("statvfs the rootfs", errno);
  unsigned long keep = 0;
  if (root.f_flag & ST_NOSUID) keep |= MS_NOSUID;
  if (root.f_flag & ST_NODEV) keep |= MS_NODEV;
  if (root.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
  if (mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, nullptr) != 0)
    fail("make the rootfs read-only", errno);
  // The bounding set goes while still root: afterwards CAP_SETPCAP is gone with the uid.
  for (int cap = 0; cap < 64; ++cap)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      fail("drop from the bounding set", errno);
    }
  gid_t groups[kMaxList];
  for (int i = 0; i < opt.groups.n; ++i) groups[i] = static_cast<gid_t>(strtoul(opt.groups.items[i], nullptr, 10));
  if (setgroups(static_cast<size_t>(opt.groups.n), groups) != 0) fail("setgroups", errno);
  if (setresgid(opt.gid, opt.gid, opt.gid) != 0) fail("setgid", errno);
  if (setresuid(opt.uid, opt.uid, opt.uid) != 0) fail("setuid", errno);
  if (set_capabilities(0, 0, 0) != 0) fail("drop capabilities", errno);
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    fail("clear ambient capabilities", errno);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("set no_new_privs", errno);
  if (filter_len > 0) {
    sock_fprog prog{static_cast<unsigned short>(filter_len), filter};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) fail("load the seccomp filter", errno);
  }
  static char* const env[] = {const_cast<char*>("PATH=/"), nullptr};
  execve(opt.args[0], opt.args, env);
  fail(opt.args[0], errno);
}

}  // namespace

int main(int argc, char** argv) {
  // The pause keeps 0-2 alone, for the pod's life: nothing else that reached the launcher goes on.
  if (int err = berth::mark_descriptors_cloexec_from(kReport + 1))
    fail("mark inherited descriptors close-on-exec", err);
  parse(argc, argv);
  read_filter();
  // Before the cgroup, whose device list allows nothing (a systemd scope's berthd opened it for).
  int devnull = cgroup_wait_fd >= 0 ? kReport + 1 : open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) fail("open /dev/null", errno);
  for (int i = 0; i < opt.cgroup_procs.n; ++i)
    if (!write_file(opt.cgroup_procs.items[i], "0")) fail(opt.cgroup_procs.items[i], errno);
  if (cgroup_wait_fd >= 0) {
    char go = 0;
    ssize_t n;
    while ((n = read(cgroup_wait_fd, &go, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1 || go != '1') fail("berthd did not place the launcher in the pause's scope", n < 0 ? errno : 0);
    close(cgroup_wait_fd);
  }
  // While still root on the node: lowering it below 0 needs CAP_SYS_RESOURCE there. The pause
  // inherits it.
  if (opt.oom && !write_file("/proc/self/oom_score_adj", opt.oom)) fail("set oom_score_adj", errno);
  // Opened while still root on the node: berthd's state dirs are closed to the pod's root.
  int netns = -1;
  if (opt.netns && (netns = open(opt.netns, O_RDONLY | O_CLOEXEC)) < 0) fail("open the pod's network namespace", errno);
  if (opt.userns) {
    // Joined before the network namespace it owns; then its root, so that what the pause makes
    // (the /dev entries) has an owner the namespace maps.
    // Nothing of the pod's may ptrace it or read its memory while it still holds node root's fds.
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) fail("make the launcher non-dumpable", errno);
    int fd = open(opt.userns, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWUSER) != 0) fail("join the pod's user namespace", errno);
    close(fd);
    if (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0) fail("become the user namespace's root", errno);
  }
  if (netns >= 0) {
    if (setns(netns, CLONE_NEWNET) != 0) fail("join the pod's network namespace", errno);
    close(netns);
  }
  if (unshare(opt.new_ns) != 0) fail("unshare the pod's namespaces", errno);
  // Through the host's /proc, which shows the namespaces this process is in now.
  for (int i = 0; i < opt.sysctls.n; ++i) set_sysctl(opt.sysctls.items[i]);
  if (opt.hostname && sethostname(opt.hostname, strlen(opt.hostname)) != 0) fail("sethostname", errno);
  int status_fd = -1;
  pid_t child = fork_with_exec_status(&status_fd);
  if (child < 0) fail("fork", errno);
  if (child == 0) {
    exec_status_fd = status_fd;
    close(report_fd);
    become_pause(devnull);
  }
  char why[1100];
  size_t got = read_exec_failure(status_fd, why, sizeof why);
  if (got > 0) {
    waitpid(child, nullptr, 0);
    (void)!write(report_fd, why, got);
    _exit(kFailed);
  }
  char line[64];
  int n = snprintf(line, sizeof line, "pid %d\n", child);
  (void)!write(report_fd, line, static_cast<size_t>(n));
  // _exit, as berth-exec does: a sanitizer's exit-time leak check would run from a task in the
  // pod's new PID namespace and hang.
  _exit(0);
}
