// Reading a small file (a /proc or /sys entry, a config.json, a record) whole, with a descriptor
// that is close-on-exec from its open: std::ifstream opens without O_CLOEXEC, so a program berthd
// started meanwhile would get a copy.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// The file's bytes, or the open or read that failed, with its errno (NOT_FOUND: no such file).
Result<std::string> read_file_bytes(const std::string& path);

// The file's bytes; "" when it cannot be read, for the many places that need one value and treat
// a missing file as empty.
std::string read_text_file(const std::string& path);

}  // namespace berth
