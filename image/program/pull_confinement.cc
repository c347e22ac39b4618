// confine_unpacker and confine_fetcher; see pull_confinement.h. libcap and libseccomp (both
// static, as in oci/) do the work; the lists of what stays and what goes are berth's own.
#include "pull_confinement.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <seccomp.h>
#include <sys/capability.h>

#include <memory>

namespace berth {

namespace {

// What unpacking a layer needs: owners, modes with setuid bits, device nodes (whiteouts are 0:0
// character devices), security.capability xattrs, and trusted.overlay.opaque (CAP_SYS_ADMIN).
constexpr cap_value_t kKept[] = {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER,   CAP_FSETID,
                                 CAP_MKNOD, CAP_SETFCAP,      CAP_SYS_ADMIN};

// Denied with EPERM. CAP_SYS_ADMIN stays for the xattrs above, so what it would otherwise allow
// beyond files is closed here.
// clang-format off
constexpr const char* kDenied[] = {
    "mount", "umount2", "pivot_root", "chroot", "setns", "unshare",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
#ifndef BERTH_SANITIZED  // LeakSanitizer stops the helper's threads with ptrace at exit
    "ptrace",
#endif
    "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "acct", "quotactl", "syslog",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "iopl", "ioperm", "vhangup", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
    "setgroups", "setfsuid", "setfsgid", "personality", "lookup_dcookie", "nfsservctl",
};
// clang-format on

bool kept(cap_value_t c) {
  for (cap_value_t k : kKept)
    if (k == c) return true;
  return false;
}

// Every capability but `keep`'s from the bounding set (while CAP_SETPCAP still allows it), and
// the ambient set.
Status narrow_bounding_set(bool (*keep)(cap_value_t)) {
  for (cap_value_t c = 0; c <= CAP_LAST_CAP; ++c)
    if (!keep(c) && ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL)
      return errno_status(errno, "drop capability " + std::to_string(c) + " from the bounding set");
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return errno_status(errno, "clear ambient capabilities");
  return ok_status();
}

Status drop_capabilities() {
  if (Status s = narrow_bounding_set(kept); !s.ok()) return s;
  std::unique_ptr<_cap_struct, int (*)(void*)> own(cap_get_proc(), cap_free), next(cap_init(), cap_free);
  if (!own || !next) return errno_status(errno, "read capabilities");
  for (cap_value_t c : kKept) {
    cap_flag_value_t have = CAP_CLEAR;
    if (cap_get_flag(own.get(), c, CAP_PERMITTED, &have) != 0 || have != CAP_SET) continue;
    cap_set_flag(next.get(), CAP_PERMITTED, 1, &c, CAP_SET);
    cap_set_flag(next.get(), CAP_EFFECTIVE, 1, &c, CAP_SET);
  }
  if (cap_set_proc(next.get()) != 0) return errno_status(errno, "set capabilities");
  return ok_status();
}

// `network`: sockets of every family; without it, unix sockets only.
Status install_seccomp_filter(bool network) {
  std::unique_ptr<void, void (*)(scmp_filter_ctx)> ctx(seccomp_init(SCMP_ACT_ALLOW), seccomp_release);
  if (!ctx) return internal_error("seccomp_init failed");
  // The 32-bit ABIs get the same rules: a default-allow filter must not leave int 0x80 open.
  if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
    seccomp_arch_add(ctx.get(), SCMP_ARCH_X86);
    seccomp_arch_add(ctx.get(), SCMP_ARCH_X32);
  }
  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not a syscall of this architecture
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0); rc != 0 && rc != -EDOM)
      return Status(Code::internal, std::string("seccomp rule for ") + name + " failed", -rc);
  }
  // No new namespaces through clone either (CAP_SYS_ADMIN would allow them); clone3 hides its
  // flags from the filter, so it is "not implemented" and glibc falls back to clone.
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc != 0 && rc != -EDOM)
    return Status(Code::internal, "seccomp rule for clone3 failed", -rc);
  for (uint64_t flag :
       {CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP})
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        rc != 0)
      return Status(Code::internal, "seccomp rule for clone failed", -rc);
  if (!network)
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
        rc != 0)
      return Status(Code::internal, "seccomp rule for socket failed", -rc);
  if (int rc = seccomp_load(ctx.get()); rc != 0) return Status(Code::internal, "load the seccomp filter", -rc);
  return ok_status();
}

}  // namespace

Status confine_unpacker() {
  // A network namespace of its own, with nothing in it: no route to any registry or host.
  if (::unshare(CLONE_NEWNET) != 0) return errno_status(errno, "leave the network (unshare a network namespace)");
  if (Status s = drop_capabilities(); !s.ok()) return s;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno_status(errno, "set no_new_privs");
  return install_seccomp_filter(false);
}

Status confine_fetcher() {
  // Its own view of the mounts, every one read-only and nothing propagated back to the host's.
  if (::unshare(CLONE_NEWNS) != 0) return errno_status(errno, "unshare a mount namespace");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return errno_status(errno, "make the mounts private");
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY;
  if (::mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof attr) != 0)
    return errno_status(errno, "make every mount read-only (mount_setattr)");
  if (Status s = narrow_bounding_set([](cap_value_t) { return false; }); !s.ok()) return s;
  // Root no more: the permitted and effective sets empty with the ids.
  if (::setgroups(0, nullptr) != 0) return errno_status(errno, "drop supplementary groups");
  if (::setresgid(kFetcherId, kFetcherId, kFetcherId) != 0) return errno_status(errno, "setresgid");
  if (::setresuid(kFetcherId, kFetcherId, kFetcherId) != 0) return errno_status(errno, "setresuid");
  // Its memory holds the pull's credentials: no process of that uid may read it.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return errno_status(errno, "make it non-dumpable");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno_status(errno, "set no_new_privs");
  return install_seccomp_filter(true);
}

}  // namespace berth
