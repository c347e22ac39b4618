// What an OCI runtime says it can do (`<runtime> features`, runc 1.1+, crun 1.9+): the mount
// options it knows, so berth uses a runtime's own `rro` where it has one. Asked once per binary
// and again when the binary at that path changes (another inode, size or mtime).
#pragma once

#include <string>
#include <vector>

namespace berth {

struct RuntimeFeatures {
  bool answered = false;  // false: the runtime has no `features` command or its answer did not read
  std::vector<std::string> mount_options;
  bool has_mount_option(const std::string& option) const;
};

RuntimeFeatures runtime_features(const std::string& binary);

// The features document as the runtime prints it (a parameter for tests).
RuntimeFeatures parse_runtime_features(const std::string& json_text);

}  // namespace berth
