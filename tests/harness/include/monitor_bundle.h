// MonitoredContainer: one busybox container for the berth-monitor tests (bundle built from Debian's
// /bin/busybox, config.json from `runc spec`, runc root, log and exit paths in a temp dir), torn
// down on destruction even when a test failed: runc delete -f, the monitor killed, cgroups removed.
// Also the small I/O helpers the monitor tests share.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "berth/monitor.h"
#include "berth/test/temp_dir.h"

namespace berth::test {

struct LogRecord {
  std::string time, stream, tag, content;
};

// Every record of a CRI log file (a last line without '\n' is ignored: it is still being written).
std::vector<LogRecord> read_cri_log(const std::string& path);

// Polls `done` until it holds or `limit` passes (a bound against hangs, not a timing assertion).
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(30));

class MonitoredContainer {
 public:
  MonitoredContainer(const std::string& name, std::vector<std::string> args, bool tty = false);
  ~MonitoredContainer();
  MonitoredContainer(const MonitoredContainer&) = delete;
  MonitoredContainer& operator=(const MonitoredContainer&) = delete;

  // Options for spawn_monitor with every path of this container filled in.
  MonitorSpawnOptions options() const;
  Result<MonitorStarted> spawn(const MonitorSpawnOptions& opts);
  Result<MonitorStarted> spawn() { return spawn(options()); }
  // For a monitor started elsewhere (a forked spawner), so teardown still finds it.
  void adopt(const MonitorStarted& started) { started_ = started; }

  Status start();           // runc start
  Status kill(int signal);  // runc kill
  Result<ExitInfo> wait_exit_file();
  std::vector<LogRecord> log() const { return read_cri_log(log_path); }
  std::vector<std::string> contents(const std::string& stream) const;  // "F text" per record
  bool log_has(const std::string& stream, const std::string& record) const;
  std::string diagnostics() const;  // the monitor's own stderr, for failure messages

  std::string id;
  std::string runtime_root, bundle, socket_path, exit_file, log_path;
  const MonitorStarted& started() const { return started_; }

 private:
  TempDir dir_;
  MonitorStarted started_;
};

// True when pid is a live (not zombie) process.
bool process_alive(pid_t pid);

// spawn_monitor then runc start, with gtest assertions (check HasFatalFailure() after).
void spawn_and_start(MonitoredContainer& c, const MonitorSpawnOptions& opts);
inline void spawn_and_start(MonitoredContainer& c) { spawn_and_start(c, c.options()); }

// Reads fd into *seen until it holds `want` (true), or the fd ends or the bound passes (false).
bool read_until(int fd, const std::string& want, std::string* seen,
                std::chrono::milliseconds limit = std::chrono::seconds(30));
bool write_all(int fd, const std::string& data);

}  // namespace berth::test
