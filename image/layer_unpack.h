// Unpacks one layer blob (tar, gzip or zstd) into a snapshot directory with libarchive, turning
// OCI whiteouts into overlayfs ones and refusing entries that would land outside the directory.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// `dest` must exist and be empty. `what` names the layer in errors.
Status unpack_layer(const std::string& blob_path, const std::string& dest, const std::string& what);

}  // namespace berth
