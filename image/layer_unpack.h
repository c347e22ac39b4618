// Unpacks one layer blob (tar, gzip or zstd) into a snapshot directory with libarchive, turning
// OCI whiteouts into overlayfs ones and refusing entries that would land outside the directory.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// `dest` must exist and be empty. `what` names the layer in errors. With `from_inside` (only for a
// process of one thread: berth-pull's unpacker) it works with `dest` as the current directory, so
// libarchive looks for planted symlinks only along each entry's own path instead of along every
// component of `dest` too for every entry (busybox's ~400 entries: ~20 system calls less each).
// It leaves the current directory at "/".
Status unpack_layer(const std::string& blob_path, const std::string& dest, const std::string& what,
                    bool from_inside = false);

// An overlayfs whiteout (a 0:0 character device) for `rel` (normalised, relative) in the upper dir
// `root`, its directories made where missing and none of them a symlink; what was there goes.
Status make_overlay_whiteout(const std::string& root, const std::string& rel);

}  // namespace berth
