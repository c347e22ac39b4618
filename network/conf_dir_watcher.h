// ConfDirWatcher: a thread that calls `changed` whenever a file in the CNI conf dir is created,
// written, renamed or removed (inotify), and when the dir itself appears or goes away.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "berth/unique_fd.h"

namespace berth::cni {

class ConfDirWatcher {
 public:
  ConfDirWatcher(std::string dir, std::function<void()> changed);
  ~ConfDirWatcher();  // stops and joins the thread
  ConfDirWatcher(const ConfDirWatcher&) = delete;
  ConfDirWatcher& operator=(const ConfDirWatcher&) = delete;

 private:
  void run();

  std::string dir_;
  std::function<void()> changed_;
  UniqueFd inotify_, stop_;
  std::thread thread_;
};

}  // namespace berth::cni
