// WorkerPool: a fixed set of threads running posted work (backend calls that may block). Unlike
// asio::thread_pool, whose constructor throws when a thread cannot be made (and then waits for
// the threads it did make), starting it returns the failure as a Status.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "berth/status.h"

namespace berth::streaming {

class WorkerPool {
 public:
  using executor_type = boost::asio::io_context::executor_type;
  WorkerPool();
  ~WorkerPool();  // join()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts `threads` threads; when one cannot be made, those made are stopped and joined.
  Status start(int threads, const std::string& name);
  executor_type get_executor() { return ioc_.get_executor(); }
  // Runs what is queued, then ends the threads.
  void join();

 private:
  boost::asio::io_context ioc_;
  std::optional<boost::asio::executor_work_guard<executor_type>> guard_;
  std::vector<std::thread> threads_;
};

}  // namespace berth::streaming
