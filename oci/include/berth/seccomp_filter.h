// An OCI seccomp section compiled to the BPF program a runtime loads for it, so berth can confine
// a process it starts itself (ExecSync's berth-exec) exactly as runc confines the container's.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

struct SeccompProgram {
  std::string bpf;     // struct sock_filter[], for seccomp(SECCOMP_SET_MODE_FILTER)
  unsigned flags = 0;  // SECCOMP_FILTER_FLAG_* from the section's "flags"
};

// The section compiled as runc compiles it: libseccomp with the section's architectures, rules
// whose action is the default one left out, names this libseccomp does not know skipped, a rule's
// conditions on one argument index repeated made separate rules, and, unless the default action
// allows, a prefix that answers ENOSYS for x86-64 and i386 syscalls numbered past the highest the
// section names (so software probing newer calls falls back, as under runc). What berth does not
// compile (notify actions and listeners, unknown actions, operators or flags) is UNIMPLEMENTED:
// the caller lets the runtime do it. A malformed section is INVALID_ARGUMENT.
Result<SeccompProgram> compile_seccomp_filter(const nlohmann::json& section);

// Compiled programs by section text: containers and pauses of one profile share one. Bounded: a
// node with many distinct Localhost profiles compiles again rather than growing.
class SeccompProgramCache {
 public:
  Result<SeccompProgram> get(const nlohmann::json& section);

 private:
  Mutex mu_;
  std::map<std::string, SeccompProgram> programs_ BERTH_GUARDED_BY(mu_);
};

}  // namespace berth
