// ExecSync through berth-exec (program/berth_exec.cc) instead of `runtime exec`: the request
// derived from the container's spec and the helper's binary held in a sealed memfd (internal to
// container/).
#pragma once

#include <string>
#include <vector>

#include "berth/oci_spec.h"
#include "berth/seccomp_filter.h"
#include "berth/status.h"
#include "berth/unique_fd.h"

namespace berth {

// The helper's binary, copied into a sealed memfd once: the helper runs from that copy, which no
// process (in a container or on the host) can change, rather than from a file on disk.
class ExecHelperBinary {
 public:
  // An empty path gives an absent helper (every ExecSync through the runtime).
  static Result<ExecHelperBinary> load(const std::string& path);
  bool present() const { return static_cast<bool>(fd_); }
  // What to exec: /proc/self/fd/<n>, valid in any child of berthd.
  std::string exec_path() const;

 private:
  UniqueFd fd_;
};

// berth-exec's request for `cmd` with the spec's process settings and seccomp, joining the
// cgroup.procs files given. UNIMPLEMENTED when the spec asks for what the helper does not do
// (a terminal, an SELinux label, process fields it does not know, a seccomp notify action): the
// caller runs the runtime's exec instead.
Result<std::string> exec_helper_request(const oci::Spec& spec, const std::vector<std::string>& cmd,
                                        const std::vector<std::string>& cgroup_procs, SeccompProgramCache& seccomp);

}  // namespace berth
