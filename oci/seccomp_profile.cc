// Syscall names are resolved with libseccomp (seccomp_syscall_resolve_name) for the native arch.
#include "berth/seccomp_profile.h"

#include <seccomp.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <string_view>

namespace berth {

namespace {

struct Denied {
  const char* capability;  // the capability that allows them; nullptr: never allowed
  std::vector<const char*> syscalls;
};

const std::vector<Denied>& denied_syscalls() {
  static const std::vector<Denied> kDenied = {
      {nullptr,
       {"add_key", "keyctl", "request_key", "create_module", "get_kernel_syms", "query_module", "kexec_file_load",
        "kexec_load", "nfsservctl", "pivot_root", "swapon", "swapoff", "sysfs", "_sysctl", "uselib", "userfaultfd",
        "ustat", "vhangup"}},
      {"CAP_SYS_ADMIN",
       {"bpf", "fanotify_init", "fsconfig", "fsmount", "fsopen", "fspick", "lookup_dcookie", "mount", "mount_setattr",
        "move_mount", "name_to_handle_at", "open_tree", "perf_event_open", "quotactl", "quotactl_fd", "setdomainname",
        "sethostname", "setns", "umount", "umount2", "unshare"}},
      {"CAP_SYS_BOOT", {"reboot"}},
      {"CAP_SYS_MODULE", {"init_module", "finit_module", "delete_module"}},
      {"CAP_SYS_PTRACE", {"kcmp", "pidfd_getfd", "process_madvise", "process_vm_readv", "process_vm_writev"}},
      {"CAP_SYS_RAWIO", {"iopl", "ioperm"}},
      {"CAP_SYS_TIME", {"settimeofday", "stime", "clock_settime", "clock_adjtime"}},
      {"CAP_SYS_PACCT", {"acct"}},
      {"CAP_SYS_NICE", {"get_mempolicy", "mbind", "set_mempolicy", "migrate_pages", "move_pages"}},
      {"CAP_SYSLOG", {"syslog"}},
      {"CAP_DAC_READ_SEARCH", {"open_by_handle_at"}},
  };
  return kDenied;
}

// CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET.
constexpr uint64_t kNamespaceFlags[] = {0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000};

}  // namespace

nlohmann::json runtime_default_seccomp(const std::vector<std::string>& capabilities) {
  auto has = [&](const char* cap) { return std::find(capabilities.begin(), capabilities.end(), cap) != capabilities.end(); };
  nlohmann::json names = nlohmann::json::array();
  for (const Denied& d : denied_syscalls()) {
    if (d.capability && has(d.capability)) continue;
    for (const char* n : d.syscalls)
      if (seccomp_syscall_resolve_name(n) != __NR_SCMP_ERROR) names.push_back(n);
  }
  nlohmann::json rules = nlohmann::json::array();
  rules.push_back({{"names", names}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", EPERM}});
  if (!has("CAP_SYS_ADMIN")) {
    // One rule per flag: a filter compares masked values for equality, and rules are or'ed.
    for (uint64_t flag : kNamespaceFlags)
      rules.push_back({{"names", {"clone"}},
                       {"action", "SCMP_ACT_ERRNO"},
                       {"errnoRet", EPERM},
                       {"args", {{{"index", 0}, {"value", flag}, {"valueTwo", flag}, {"op", "SCMP_CMP_MASKED_EQ"}}}}});
    if (seccomp_syscall_resolve_name("clone3") != __NR_SCMP_ERROR)
      rules.push_back({{"names", {"clone3"}}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", ENOSYS}});
  }
  return {{"defaultAction", "SCMP_ACT_ALLOW"},
          {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"}},
          {"syscalls", rules}};
}

Result<std::optional<nlohmann::json>> seccomp_section(const SeccompRequest& req) {
  switch (req.kind) {
    case SeccompKind::unconfined: return std::optional<nlohmann::json>();
    case SeccompKind::runtime_default: return std::optional<nlohmann::json>(runtime_default_seccomp(req.capabilities));
    case SeccompKind::localhost: break;
  }
  if (req.localhost_path.empty() || req.localhost_path[0] != '/')
    return invalid_argument(req.field + ": localhost profile '" + req.localhost_path + "' is not an absolute path");
  std::ifstream in(req.localhost_path);
  if (!in) return errno_status(errno, req.field + ": localhost profile " + req.localhost_path, Code::invalid_argument);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!j.is_object() || !j.contains("defaultAction"))
    return invalid_argument(req.field + ": localhost profile " + req.localhost_path + " is not a seccomp profile (no defaultAction)");
  // The profile goes to the runtime as it is; its top-level shape is checked here so a wrong
  // type is reported against the profile, not as the runtime's failure to start the container.
  for (const char* key : {"defaultAction", "architectures", "syscalls"}) {
    bool string_wanted = std::string_view(key) == "defaultAction";
    if (!j.contains(key) || (!string_wanted && j[key].is_null())) continue;
    if (string_wanted ? !j[key].is_string() : !j[key].is_array())
      return invalid_argument(req.field + ": localhost profile " + req.localhost_path + ": field '" + key + "': type must be " +
                              (string_wanted ? "string" : "array") + ", but is " + j[key].type_name());
  }
  return std::optional<nlohmann::json>(std::move(j));
}

}  // namespace berth
