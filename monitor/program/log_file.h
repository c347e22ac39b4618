// The container's CRI log file: owns its fd (O_APPEND, 0640, parents created) and writes each
// record with one write() so records of stdout and stderr never interleave. Reopened on request
// after kubelet renamed it for rotation. With a log directory, the file (and the directories on the
// way) is opened beneath it following no symlink (open_beneath).
#pragma once

#include <stddef.h>

#include "berth/unique_fd.h"

namespace berth::monitor {

class LogFile {
 public:
  // Returns 0 or an errno. line_max: the longest record content, for the one line buffer.
  // log_dir: null, or the directory path lies below.
  int open(const char* path, const char* log_dir, size_t line_max);
  // Opens the path anew (a fresh file once the old one was renamed) and only then lets go of the
  // old fd. Returns 0 or an errno; on error the old file stays in use.
  int reopen();
  void write_record(const char* stream, bool partial, const char* data, size_t len);

 private:
  const char* path_ = nullptr;
  const char* dir_ = nullptr;
  UniqueFd fd_;
  char* line_ = nullptr;
  size_t line_cap_ = 0;
};

}  // namespace berth::monitor
