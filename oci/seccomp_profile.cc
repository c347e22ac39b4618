// Syscall names are resolved with libseccomp (seccomp_syscall_resolve_name) for the native arch.
#include "berth/seccomp_profile.h"

#include <seccomp.h>

#include <fstream>
#include <sstream>

namespace berth {

nlohmann::json runtime_default_seccomp() {
  static const char* kDenied[] = {
      "acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "create_module", "delete_module", "finit_module",
      "get_kernel_syms", "get_mempolicy", "init_module", "ioperm", "iopl", "kcmp", "kexec_file_load", "kexec_load",
      "keyctl", "lookup_dcookie", "mbind", "migrate_pages", "move_pages", "name_to_handle_at", "nfsservctl",
      "open_by_handle_at", "perf_event_open", "pivot_root", "process_vm_readv", "process_vm_writev", "query_module",
      "quotactl", "reboot", "request_key", "set_mempolicy", "setns", "settimeofday", "stime", "swapoff", "swapon",
      "sysfs", "_sysctl", "syslog", "umount", "umount2", "mount", "unshare", "uselib", "userfaultfd", "ustat", "vhangup",
      "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"};
  nlohmann::json names = nlohmann::json::array();
  for (const char* n : kDenied)
    if (seccomp_syscall_resolve_name(n) != __NR_SCMP_ERROR) names.push_back(n);
  return {{"defaultAction", "SCMP_ACT_ALLOW"},
          {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"}},
          {"syscalls", {{{"names", names}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 1}}}}};
}

Result<std::optional<nlohmann::json>> seccomp_section(const SeccompRequest& req) {
  switch (req.kind) {
    case SeccompKind::unconfined: return std::optional<nlohmann::json>();
    case SeccompKind::runtime_default: return std::optional<nlohmann::json>(runtime_default_seccomp());
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
  return std::optional<nlohmann::json>(std::move(j));
}

}  // namespace berth
