// Reading a small file (a /proc or /sys entry, a config.json) whole, for the many places that
// need one value and treat a missing file as empty.
#pragma once

#include <string>

namespace berth {

// The file's bytes; "" when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace berth
