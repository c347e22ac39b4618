// Durable file replacement: write a temp file beside the target, fsync it, rename it over the
// target, fsync the directory. A crash leaves either the old or the new content, never a mix.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

// durable false: no fsyncs (still atomic), for files under the runtime state dir, which a reboot
// clears anyway (OCI bundles).
Status write_file_atomically(const std::string& path, const std::string& content, int mode = 0600, bool durable = true);

// A copy of `from` (a program berthd installs where its pods run it) renamed over `to` with mode
// `mode` exactly, without fsyncs: both descriptors close-on-exec (std::filesystem::copy_file opens
// its target without), and no fault point, since it runs at every start.
Status copy_file_atomically(const std::string& from, const std::string& to, int mode);

// The temp files ("<target>.tmp-<pid>-<n>") that write_file_atomically calls cut short by a crash
// left in `dir`: removed, and their paths returned for the caller to log. Call only while no write
// to `dir` can be in flight (at start).
std::vector<std::string> remove_atomic_write_leftovers(const std::string& dir);

}  // namespace berth
