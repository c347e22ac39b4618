// The name lists of the RuntimeDefault allowlist. Variants that exist on one architecture only
// (the *64 and *_time64 calls of 32-bit ABIs, socketcall, ipc, arm's private calls) are listed so
// 32-bit binaries keep working under the profile's extra architectures.
#include "berth/seccomp_syscalls.h"

namespace berth {

// The lists keep the layout they are read in (clang-format would put one name per line).
// clang-format off
const std::vector<SyscallGroup>& runtime_default_syscalls() {
  static const std::vector<SyscallGroup> kGroups = {
      // Reading, writing and moving data between descriptors.
      {nullptr,
       {"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2", "lseek",
        "_llseek", "sendfile", "sendfile64", "splice", "tee", "vmsplice", "copy_file_range", "readahead"}},
      // Descriptor bookkeeping and file-level controls.
      {nullptr,
       {"close", "close_range", "dup", "dup2", "dup3", "fcntl", "fcntl64", "ioctl", "flock", "fsync", "fdatasync", "sync",
        "syncfs", "sync_file_range", "sync_file_range2", "arm_sync_file_range", "fadvise64", "fadvise64_64",
        "arm_fadvise64_64", "fallocate", "ftruncate", "ftruncate64", "pipe", "pipe2", "cachestat"}},
      // Opening files and walking, creating and renaming paths (absolute and *at forms).
      {nullptr,
       {"open", "openat", "openat2", "creat", "access", "faccessat", "faccessat2", "chdir", "fchdir", "getcwd", "mkdir",
        "mkdirat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "unlink",
        "unlinkat", "readlink", "readlinkat", "mknod", "mknodat", "truncate", "truncate64", "umask", "getdents",
        "getdents64"}},
      // Ownership, modes and timestamps (the kernel still checks CAP_CHOWN, CAP_FOWNER, …).
      {nullptr,
       {"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "chown32", "fchown32",
        "lchown32", "utime", "utimes", "futimesat", "utimensat", "utimensat_time64"}},
      // The stat family.
      {nullptr,
       {"stat", "fstat", "lstat", "newfstatat", "fstatat64", "stat64", "fstat64", "lstat64", "oldstat", "oldfstat",
        "oldlstat", "statx", "statfs", "fstatfs", "statfs64", "fstatfs64"}},
      // Extended attributes.
      {nullptr,
       {"getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr", "listxattr", "llistxattr",
        "flistxattr", "removexattr", "lremovexattr", "fremovexattr"}},
      // Memory: mappings, protection, advice, locking, anonymous files, barriers.
      {nullptr,
       {"brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "remap_file_pages",
        "mlock", "mlock2", "munlock", "mlockall", "munlockall", "membarrier", "memfd_create", "pkey_alloc", "pkey_free",
        "pkey_mprotect", "map_shadow_stack", "mseal"}},
      // Threads: futexes, thread-local storage, restartable sequences, robust lists.
      {nullptr,
       {"futex", "futex_time64", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "set_robust_list",
        "get_robust_list", "set_tid_address", "gettid", "rseq", "set_thread_area", "get_thread_area", "arch_prctl",
        "set_tls", "get_tls", "cacheflush", "breakpoint", "sched_yield"}},
      // Making, running, waiting for and signalling processes (clone is filtered separately).
      {nullptr,
       {"fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid", "waitpid", "kill", "tkill",
        "tgkill", "pidfd_open", "pidfd_send_signal", "prctl", "restart_syscall"}},
      // Tracing: since Linux 4.8 seccomp runs again after a tracer changes a call, so a tracer cannot
      // smuggle a refused call through; the kernel's ptrace access checks (same user, CAP_SYS_PTRACE
      // for others, Yama) still decide who may be traced. strace and gdb work in a default container.
      {nullptr, {"ptrace"}},
      // Process identity, groups and sessions.
      {nullptr,
       {"getpid", "getppid", "getpgid", "setpgid", "getpgrp", "getsid", "setsid", "uname", "olduname", "oldolduname",
        "sysinfo", "getrusage", "times"}},
      // Credentials: reading them, and changing them within what CAP_SETUID/CAP_SETGID allow.
      {nullptr,
       {"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setuid", "setgid", "setreuid",
        "setregid", "setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid", "getuid32", "geteuid32", "getgid32",
        "getegid32", "getresuid32", "getresgid32", "getgroups32", "setuid32", "setgid32", "setreuid32", "setregid32",
        "setresuid32", "setresgid32", "setgroups32", "setfsuid32", "setfsgid32", "capget", "capset"}},
      // Resource limits, priorities and I/O priorities (raising them is the kernel's CAP_SYS_NICE/RESOURCE check).
      {nullptr,
       {"getrlimit", "ugetrlimit", "setrlimit", "prlimit64", "getpriority", "setpriority", "nice", "ioprio_get",
        "ioprio_set"}},
      // Scheduling policy and CPU affinity.
      {nullptr,
       {"sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_setparam", "sched_getscheduler",
        "sched_setscheduler", "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval",
        "sched_rr_get_interval_time64", "sched_getattr", "sched_setattr", "getcpu"}},
      // Signal handling and delivery.
      {nullptr,
       {"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend", "rt_sigpending", "rt_sigtimedwait",
        "rt_sigtimedwait_time64", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "signal", "sigaction",
        "sigprocmask", "sigreturn", "sigsuspend", "sigpending", "pause", "alarm", "signalfd", "signalfd4"}},
      // Clocks, sleeps and timers. adjtimex and clock_adjtime (glibc makes every adjtimex and
      // ntp_gettime a clock_adjtime) are here for their read-only use, modes 0, as time-sync
      // status checks make it: a filter cannot look inside the struct, and the kernel refuses any
      // change without CAP_SYS_TIME (or, for a PTP clock, a device opened for writing). Setting a
      // clock outright is gated below.
      {nullptr,
       {"time", "gettimeofday", "clock_gettime", "clock_gettime64", "clock_getres", "clock_getres_time64",
        "clock_nanosleep", "clock_nanosleep_time64", "nanosleep", "adjtimex", "clock_adjtime", "clock_adjtime64",
        "getitimer", "setitimer", "timer_create",
        "timer_delete", "timer_gettime", "timer_gettime64", "timer_settime", "timer_settime64", "timer_getoverrun",
        "timerfd_create", "timerfd_gettime", "timerfd_gettime64", "timerfd_settime", "timerfd_settime64"}},
      // Waiting on descriptors: select, poll, epoll, eventfd, inotify.
      {nullptr,
       {"select", "_newselect", "pselect6", "pselect6_time64", "poll", "ppoll", "ppoll_time64", "epoll_create",
        "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "inotify_init",
        "inotify_init1", "inotify_add_watch", "inotify_rm_watch"}},
      // Asynchronous I/O of the older AIO interface (io_uring is not this, and stays refused).
      {nullptr,
       {"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents", "io_pgetevents_time64"}},
      // Socket calls (socket itself is filtered by address family).
      {nullptr,
       {"socketpair", "bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername", "getsockopt",
        "setsockopt", "shutdown", "sendto", "recvfrom", "send", "recv", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
        "recvmmsg_time64", "socketcall"}},
      // System V and POSIX IPC (namespaced per pod).
      {nullptr,
       {"shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semtimedop_time64", "semctl", "msgget",
        "msgsnd", "msgrcv", "msgctl", "ipc", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedsend_time64",
        "mq_timedreceive", "mq_timedreceive_time64", "mq_notify", "mq_getsetattr"}},
      // Self-confinement a workload may add on top: seccomp filters and Landlock rulesets.
      {nullptr, {"seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"}},
      // Randomness.
      {nullptr, {"getrandom"}},

      // Mounts, namespaces, host names, and the kernel facilities SYS_ADMIN stands for. pivot_root is
      // here rather than never-allowed: a process that may mount and unshare can build the same
      // result with chroot, and nested runtimes (runc, buildkit) need it.
      {"CAP_SYS_ADMIN",
       {"mount", "umount", "umount2", "pivot_root", "unshare", "setns", "sethostname", "setdomainname", "fsopen",
        "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr", "quotactl", "quotactl_fd",
        "fanotify_init", "fanotify_mark", "name_to_handle_at", "lookup_dcookie", "bpf", "perf_event_open"}},
      // The capabilities split out of SYS_ADMIN in Linux 5.8.
      {"CAP_BPF", {"bpf"}},
      {"CAP_PERFMON", {"perf_event_open"}},
      {"CAP_SYS_BOOT", {"reboot"}},
      {"CAP_SYS_MODULE", {"init_module", "finit_module", "delete_module"}},
      // Reaching into another process's memory or descriptors.
      {"CAP_SYS_PTRACE", {"kcmp", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise"}},
      {"CAP_SYS_RAWIO", {"iopl", "ioperm"}},
      {"CAP_SYS_TIME", {"settimeofday", "stime", "clock_settime", "clock_settime64"}},
      {"CAP_SYS_PACCT", {"acct"}},
      // NUMA placement of memory.
      {"CAP_SYS_NICE",
       {"get_mempolicy", "set_mempolicy", "set_mempolicy_home_node", "mbind", "migrate_pages", "move_pages"}},
      {"CAP_SYSLOG", {"syslog"}},
      {"CAP_DAC_READ_SEARCH", {"open_by_handle_at"}},
      // In containerd's default capability set, so a default container can chroot.
      {"CAP_SYS_CHROOT", {"chroot"}},
  };
  return kGroups;
}

const std::vector<const char*>& runtime_default_never_allowed() {
  static const std::vector<const char*> kNever = {
      // io_uring runs I/O from kernel workers that seccomp never sees, and its bugs have been a
      // steady source of kernel exploits; a Localhost profile may allow it.
      "io_uring_setup", "io_uring_enter", "io_uring_register",
      // Replacing the running kernel.
      "kexec_load", "kexec_file_load",
      // Keyrings are not namespaced.
      "keyctl", "add_key", "request_key",
      // Page-fault handling in user space makes kernel races easy to win.
      "userfaultfd",
      // Host swap devices.
      "swapon", "swapoff",
      // Obsolete or unimplemented interfaces.
      "create_module", "get_kernel_syms", "query_module", "nfsservctl", "uselib", "ustat", "sysfs", "_sysctl",
      "vhangup", "modify_ldt", "vm86", "vm86old",
  };
  return kNever;
}
// clang-format on

}  // namespace berth
