// A directory path from a request in one spelling: "/var/log/pods/p/" and "/var//log/pods/p" name
// the same directory as "/var/log/pods/p", and paths built below it must match the one berth-monitor
// is told (its --log-dir check compares prefixes).
#pragma once

#include <string>

namespace berth {

// `path` lexically normalised ("." and doubled slashes gone, ".." folded), without a trailing
// slash but for "/" itself. No file system access.
std::string lexically_normal_dir(const std::string& path);

}  // namespace berth
