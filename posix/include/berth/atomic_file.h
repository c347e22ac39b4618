// Durable file replacement: write a temp file beside the target, fsync it, rename it over the
// target, fsync the directory. A crash leaves either the old or the new content, never a mix.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

Status write_file_atomically(const std::string& path, const std::string& content, int mode = 0600);

}  // namespace berth
