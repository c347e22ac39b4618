// The container's CRI log file: owns its fd (O_APPEND, 0640, parents created) and writes each
// record with one write() so records of stdout and stderr never interleave. A record the file
// does not take whole (a full disk) is dropped and counted, and what part of it went in is cut
// off again, so the file holds whole records only; the container never waits on its log. Reopened on request
// after kubelet renamed it for rotation. With a log directory, the file (and the directories on the
// way) is opened beneath it following no symlink (open_beneath).
#pragma once

#include <stddef.h>

#include "berth/monitor_protocol.h"
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
  // True each time records start being lost and each time the file takes them again, and again
  // once a second while they are being lost and for a few seconds after (a report is sent without
  // waiting, so one may be dropped, or precede berthd's subscription); *out then holds the totals
  // so far.
  bool take_loss_change(monitor_protocol::LogLoss* out);
  // The report take_loss_change asked for could not be sent: the next record asks again.
  void report_again();

 private:
  void lost(size_t len, int err);
  monitor_protocol::LogLoss loss_{};
  bool reported_losing_ = false;
  bool reported_losing_before_ = false;  // before the last take_loss_change, for report_again
  int64_t reported_at_ns_ = 0;           // CLOCK_MONOTONIC
  int64_t loss_ended_at_ns_ = -1;        // when the file last took records again; -1: never lost
  const char* path_ = nullptr;
  const char* dir_ = nullptr;
  UniqueFd fd_;
  char* line_ = nullptr;
  size_t line_cap_ = 0;
};

}  // namespace berth::monitor
