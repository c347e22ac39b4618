// berthd's log line format: on a terminal or a file, a timestamp and the level; when stderr is
// systemd's journal (a service's stream, named by $JOURNAL_STREAM), each line begins with the
// syslog priority journald reads ("<3>" for error, sd-daemon(3)) and no timestamp, since the
// journal keeps its own: `journalctl -u berthd -p warning` then shows what berthd logged at warn
// and above.
#pragma once

#include <memory>

#include <spdlog/formatter.h>

namespace berth {

// Whether fd 2 is the stream $JOURNAL_STREAM names ("<device>:<inode>").
bool stderr_is_journal();

std::unique_ptr<spdlog::formatter> berthd_log_formatter(bool journal);

}  // namespace berth
