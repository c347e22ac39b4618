// RuntimeProbe: is the configured OCI runtime (runc, crun) usable? Found on disk and answering
// `--version`. The answer is cached against the binary's identity (inode, size, mtime), so Status
// calls stat the file but exec it only when it appeared or changed.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "berth/file_identity.h"
#include "berth/mutex.h"

namespace berth {

struct RuntimeProbeResult {
  bool ready = false;
  std::string path;     // resolved binary path, when found
  std::string version;  // first line of `--version`
  std::string message;  // why it is not ready
};

class RuntimeProbe {
 public:
  explicit RuntimeProbe(std::string configured_path) : configured_(std::move(configured_path)) {}
  RuntimeProbeResult check();
  // Another binary (a reload changed the default handler): the next check() probes it.
  void set_path(std::string configured_path);

 private:
  Mutex mu_;
  std::string configured_ BERTH_GUARDED_BY(mu_);
  bool probed_ BERTH_GUARDED_BY(mu_) = false;
  std::string last_path_ BERTH_GUARDED_BY(mu_);
  std::optional<FileIdentity> last_id_ BERTH_GUARDED_BY(mu_);
  RuntimeProbeResult last_ BERTH_GUARDED_BY(mu_);
};

}  // namespace berth
