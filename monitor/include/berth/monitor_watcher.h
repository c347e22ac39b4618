// MonitorWatcher: the one berthd thread that learns of container exits without polling. It holds
// one subscribed connection per berth-monitor (epoll) and falls back to the exit file when the
// monitor is already gone, so it works the same after a berthd restart. Persists nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "berth/monitor.h"
#include "berth/status.h"

namespace berth {

class MonitorWatcher {
 public:
  // Called on the watcher's thread, exactly once per watch() that returned ok (unless unwatched
  // first). A monitor that vanished without an exit file yields kUnknownExitCode and a reason
  // saying so.
  using OnExit = std::function<void(const std::string& id, const ExitInfo& exit)>;
  // A container's log file stopped taking its output (writing false) or took it again (true);
  // the totals lost so far. Called on the watcher's thread.
  struct LogLoss {
    uint64_t records = 0, bytes = 0;
    int sys_errno = 0;
    bool writing = false;
  };
  using OnLogLoss = std::function<void(const std::string& id, const LogLoss& loss)>;

  explicit MonitorWatcher(OnExit on_exit, OnLogLoss on_log_loss = nullptr);
  ~MonitorWatcher();  // stops the thread; pending exits are not reported
  MonitorWatcher(const MonitorWatcher&) = delete;
  MonitorWatcher& operator=(const MonitorWatcher&) = delete;

  // Watching an id again replaces the previous watch.
  Status watch(const std::string& id, const std::string& socket_path, const std::string& exit_file);
  // After it returns no new callback starts for this id (one already running may finish).
  void unwatch(const std::string& id);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace berth
