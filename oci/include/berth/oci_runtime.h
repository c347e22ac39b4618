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
  // `timeout`: how long one command may take; the runtime is then killed and the call fails with
  // DEADLINE_EXCEEDED (a hung runtime never holds an rpc or a container's lock for longer).
  OciRuntime(std::string binary, std::string root, bool systemd_cgroup,
             std::chrono::seconds timeout = std::chrono::seconds(60))
      : binary_(std::move(binary)), root_(std::move(root)), systemd_cgroup_(systemd_cgroup), timeout_(timeout) {}

  // The container's stdio goes to /dev/null; the runtime's log goes to <bundle>/runtime.log.
  Status create(const std::string& id, const std::string& bundle) const;
  Status start(const std::string& id) const;
  Result<RuntimeState> state(const std::string& id) const;
  Status kill(const std::string& id, int signal) const;
  // --force kills a running container first. A container the runtime does not know is fine; a
  // state directory it left without knowing the container (a create killed midway) is removed.
  // runc's --force polls for the death of what it killed (100 ms sleeps): callers that can see the
  // end of the container's init themselves (a pidfd, the monitor's exit report) wait for it and
  // call remove_stopped instead.
  Status remove(const std::string& id) const;
  // `delete` without --force, for a container whose init is known to have ended: the runtime
  // refuses it while the container runs. Unknown containers and leftover state as for remove().
  Status remove_stopped(const std::string& id) const;
  // What a hung runtime's delete leaves: its state dir for the container, removed by berthd once
  // the container's processes are gone (the caller's to know), as the runtime's delete would.
  Status forget(const std::string& id) const;
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
  std::chrono::seconds timeout() const { return timeout_; }

 private:
  Status run(const std::vector<std::string>& args, const std::string& what) const;  // in a span
  Status run_untraced(const std::vector<std::string>& args, const std::string& what) const;
  Status create_untraced(const std::string& id, const std::string& bundle) const;
  Status remove_with(const std::vector<std::string>& args, const std::string& id) const;
  std::string binary_, root_;
  bool systemd_cgroup_;
  std::chrono::seconds timeout_;
};

}  // namespace berth
