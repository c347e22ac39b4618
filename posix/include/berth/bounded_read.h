// Reading files whose bytes or path come from outside berth (an image's /etc/passwd, a Localhost
// seccomp profile named in a request): such a file may be a FIFO or a device that would block a
// gRPC thread for ever, a symlink pointing out of an image onto the host, or huge. These readers
// open with O_NONBLOCK, accept only a regular file, and read at most a given size.
#pragma once

#include <cstddef>
#include <string>

#include "berth/status.h"

namespace berth {

// `path` on the host (symlinks followed: an operator's profile may be a link).
// NOT_FOUND when it does not exist; INVALID_ARGUMENT naming `what` when it is not a regular file
// or larger than max_size.
Result<std::string> read_regular_file(const std::string& path, size_t max_size, const std::string& what);

// `rel_path` inside the directory tree `root` (an image's rootfs): resolved as if `root` were "/"
// (openat2 RESOLVE_IN_ROOT), so no symlink or ".." can leave it. Errors as read_regular_file.
Result<std::string> read_regular_file_in_root(const std::string& root, const std::string& rel_path, size_t max_size,
                                              const std::string& what);

}  // namespace berth
