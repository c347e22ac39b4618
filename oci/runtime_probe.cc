// Finds the OCI runtime binary and asks it for its version, re-asking only when the file changed.
#include "berth/mutex.h"
#include "berth/runtime_probe.h"

#include "berth/command.h"

namespace berth {

void RuntimeProbe::set_path(std::string configured_path) {
  MutexLock lock(mu_);
  if (configured_path == configured_) return;
  configured_ = std::move(configured_path);
  probed_ = false;
}

RuntimeProbeResult RuntimeProbe::check() {
  MutexLock lock(mu_);
  auto path = find_executable(configured_);
  if (!path) {
    probed_ = false;
    return {false, "", "",
            "OCI runtime \"" + configured_ + "\" not found (not an executable file" +
                (configured_.find('/') == std::string::npos ? " in PATH)" : ")")};
  }
  std::optional<FileIdentity> id = file_identity(*path);
  if (probed_ && *path == last_path_ && id == last_id_) return last_;

  RuntimeProbeResult r;
  r.path = *path;
  Command cmd;
  cmd.argv = {*path, "--version"};
  cmd.timeout = std::chrono::seconds(10);
  auto out = run_command(cmd);
  if (!out.ok()) {
    r.message = "OCI runtime " + *path + ": " + out.status().message();
  } else if (!out->success()) {
    r.message = "OCI runtime " + *path + " --version: " + out->describe(cmd.timeout);
  } else {
    r.ready = true;
    r.version = out->out.substr(0, out->out.find('\n'));
  }
  probed_ = true;
  last_path_ = *path;
  last_id_ = id;
  last_ = r;
  return r;
}

}  // namespace berth
