// The tar work of container checkpoints, run only in the berth-checkpoint-archive helper (never in
// berthd, which must not map libarchive, nor read a hostile archive itself): the archive that
// CheckpointContainer leaves at the request's location, the writable layer's diff inside it, and
// the way back when a checkpoint is restored. The layout is the one CRI-O and containerd share
// (checkpointctl's names): checkpoint/ (CRIU's images), config.dump, spec.dump, status.dump,
// rootfs-diff.tar (a plain tar of what the container added or changed), deleted.files (a JSON
// array of "/path"s it removed), container.log, stats-dump, dump.log.
#pragma once

#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

// `dir`'s tree (directories and regular files only: a checkpoint's own files) as an uncompressed
// tar at `out`, made 0600 and never over an existing file.
Status pack_checkpoint_archive(const std::string& dir, const std::string& out);

// An archive from anywhere into the empty directory `dest`: only directories and regular files,
// each path relative and without "..", nothing but what fits `max_bytes`; files 0600, dirs 0700.
// Anything else refuses the whole archive, naming the entry.
Status unpack_checkpoint_archive(const std::string& archive, const std::string& dest, uint64_t max_bytes);

struct RootfsDiff {
  uint64_t entries = 0;              // in the tar
  std::vector<std::string> deleted;  // "/a/b", from overlayfs whiteouts
};

// An overlayfs upper dir as the tar `out_tar` (files, dirs, symlinks, fifos and devices with owners,
// modes and times) and the paths it deletes. An opaque directory is written as the directory and
// what it holds: what it hid below is not listed (see the note in checkpoint_archive.cc).
Result<RootfsDiff> write_rootfs_diff(const std::string& upper, const std::string& out_tar);

// The way back: `diff_tar` (a plain tar, or a gzip OCI layer diff with .wh. whiteouts as
// containerd writes it) unpacked into the new container's empty upper dir, then each of
// `deleted_json` (a JSON array of absolute paths; "" for none) made an overlayfs whiteout there.
Status apply_rootfs_diff(const std::string& diff_tar, const std::string& deleted_json, const std::string& upper);

// deleted.files' text as paths: each absolute, normalised, without "..", at most 4096 bytes.
Result<std::vector<std::string>> parse_deleted_files(const std::string& json_text);

}  // namespace berth
