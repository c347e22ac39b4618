// Finds the OCI runtime binary and asks it for its version, re-asking only when the file changed.
#include "berth/runtime_probe.h"

#include <sys/stat.h>

#include "berth/command.h"

namespace berth {

RuntimeProbeResult RuntimeProbe::check() {
  std::lock_guard lock(mu_);
  auto path = find_executable(configured_);
  if (!path) {
    probed_ = false;
    return {false, "", "", "OCI runtime \"" + configured_ + "\" not found (not an executable file" +
                               (configured_.find('/') == std::string::npos ? " in PATH)" : ")")};
  }
  struct stat st;
  Identity id;
  if (stat(path->c_str(), &st) == 0)
    id = {st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec};
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
