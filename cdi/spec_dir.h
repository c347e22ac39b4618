// Listing a CDI spec dir and telling whether a spec file changed since it was read, by stat()
// alone (see berth/cdi.h for why not inotify).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

namespace berth::cdi {

// What stat() says of a file that changes when its bytes do: a rename over it changes the inode,
// a rewrite changes mtime and ctime (and usually the size).
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

struct SpecDirEntry {
  std::string path;
  FileStamp stamp;
  // Why the file is not to be trusted, "" when it is: its dir or the file itself is owned by, or
  // writable by, someone other than root. A spec's edits become mounts, device nodes and hooks run
  // as root on the node, so anyone who can write one can take the node.
  std::string untrusted;
};

// The regular files (symlinks followed, as the CDI reference does) named *.json, *.yaml or *.yml
// directly in `dir`, sorted by name. Subdirectories and hidden files are skipped: a writer's
// ".name.json.tmp"-style temp file ending in .json would otherwise be read half-written or define
// the same devices as the file it replaces. A missing or unreadable dir lists nothing; the files
// of a dir (or files) that a user other than root can write are listed with `untrusted` set.
std::vector<SpecDirEntry> list_spec_dir(const std::string& dir);

// Now, in the clock file timestamps use.
int64_t wall_clock_ns();

// Whether a file read at `read_at_ns` (taken before reading) with `stamp` may have been rewritten
// since without a new stamp: a timestamp is only as fine as the kernel's tick (and coarser on
// some filesystems), so a same-size rewrite within that tick keeps it. Such a file is read again
// and compared.
bool stamp_is_racy(const FileStamp& stamp, int64_t read_at_ns);

}  // namespace berth::cdi
