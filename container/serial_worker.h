// SerialWorker: one thread that runs queued tasks one after another, so work a caller must not
// wait for (the runtime's delete of a container that exited) leaves the caller's thread at once.
// Tasks still queued when it is destroyed are dropped: each must be one that another path does
// anyway when it did not run (RemoveContainer deletes what the worker did not).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "berth/mutex.h"

namespace berth {

class SerialWorker {
 public:
  SerialWorker();
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  void post(std::function<void()> task);

 private:
  void run();
  Mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_ BERTH_GUARDED_BY(mu_);
  bool stopping_ BERTH_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace berth
