// Durable file replacement: write a temp file beside the target, fsync it, rename it over the
// target, fsync the directory. A crash leaves either the old or the new content, never a mix.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// durable false: no fsyncs (still atomic), for files under the runtime state dir, which a reboot
// clears anyway (OCI bundles).
Status write_file_atomically(const std::string& path, const std::string& content, int mode = 0600, bool durable = true);

}  // namespace berth
