// FileIdentity: which file a path names and which version of it (device, inode, size, mtime), so
// what a program said about itself is asked again only when its file was replaced or changed
// (an upgrade writes a new inode; an edit in place changes the size or mtime).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace berth {

struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

// nullopt when `path` cannot be stat'ed.
std::optional<FileIdentity> file_identity(const std::string& path);

}  // namespace berth
