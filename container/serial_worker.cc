// SerialWorker; see serial_worker.h.
#include "serial_worker.h"

#include <exception>

#include <spdlog/spdlog.h>

#include "berth/mutex.h"

namespace berth {

SerialWorker::SerialWorker() : thread_([this] { run(); }) {}

SerialWorker::~SerialWorker() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    tasks_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void SerialWorker::post(std::function<void()> task) {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void SerialWorker::run() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(mu_);
      while (!stopping_ && tasks_.empty()) wake_.wait(lock.native());
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      task();
    } catch (const std::exception& e) {  // a task's failure must not end berthd
      spdlog::error("background task failed: {}", e.what());
    }
  }
}

}  // namespace berth
