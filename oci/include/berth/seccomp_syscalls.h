// The syscall names behind berth's RuntimeDefault seccomp allowlist: what every container may call,
// what a capability adds, and what is never allowed. Names cover every architecture the profile
// lists; the profile builder drops the ones libseccomp does not know.
#pragma once

#include <vector>

namespace berth {

struct SyscallGroup {
  // Allowed when the process holds this capability ("CAP_…"); nullptr: allowed for everyone.
  const char* capability;
  std::vector<const char*> names;
};

// Unconditional groups first, then the capability-gated ones. A name may sit in more than one
// gated group (bpf: CAP_SYS_ADMIN or CAP_BPF). clone, clone3, personality and socket are absent:
// the profile builder allows them with argument filters.
const std::vector<SyscallGroup>& runtime_default_syscalls();

// Calls RuntimeDefault refuses whatever the capabilities, listed so tests (and readers) can check
// that no group lets one in. Anything on neither list is refused as well.
const std::vector<const char*>& runtime_default_never_allowed();

}  // namespace berth
