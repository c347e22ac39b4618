// OciRuntime: the runc/crun command line (create, start, state, kill, delete) for one runtime
// handler, with its --root and cgroup driver. Errors carry the runtime's own message.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct RuntimeState {
  std::string status;  // creating, created, running, stopped, paused
  int pid = 0;
};

// The last error-level message of a runtime's JSON log file (--log-format json), or "".
std::string runtime_log_error(const std::string& path);

class OciRuntime {
 public:
  OciRuntime(std::string binary, std::string root, bool systemd_cgroup)
      : binary_(std::move(binary)), root_(std::move(root)), systemd_cgroup_(systemd_cgroup) {}

  // The container's stdio goes to /dev/null; the runtime's log goes to <bundle>/runtime.log.
  Status create(const std::string& id, const std::string& bundle) const;
  Status start(const std::string& id) const;
  Result<RuntimeState> state(const std::string& id) const;
  Status kill(const std::string& id, int signal) const;
  // --force kills a running container first. A container the runtime does not know is fine; a
  // state directory it left without knowing the container (a create killed midway) is removed.
  Status remove(const std::string& id) const;
  // The ids of the containers in this runtime's --root (each is a directory there), read without
  // running the runtime.
  std::vector<std::string> ids_in_root() const;
  // `update --resources <file>`: the OCI LinuxResources JSON text, applied to a running container.
  Status update(const std::string& id, const std::string& resources_json, const std::string& scratch_dir) const;
  // argv for `<runtime> --root <root> [--systemd-cgroup] <args...>`, for callers that run it themselves.
  std::vector<std::string> argv(const std::vector<std::string>& args) const;
  bool systemd_cgroup() const { return systemd_cgroup_; }

  const std::string& binary() const { return binary_; }
  const std::string& root() const { return root_; }

 private:
  Status run(const std::vector<std::string>& args, const std::string& what) const;
  std::string binary_, root_;
  bool systemd_cgroup_;
};

}  // namespace berth
