// The streaming server's thread pools; see worker_pool.h.
#include "worker_pool.h"

#include <system_error>

namespace berth::streaming {

WorkerPool::WorkerPool() = default;

WorkerPool::~WorkerPool() { join(); }

Status WorkerPool::start(int threads, const std::string& name) {
  guard_.emplace(ioc_.get_executor());
  for (int i = 0; i < threads; ++i) {
    try {
      threads_.emplace_back([this] { ioc_.run(); });
    } catch (const std::system_error& e) {
      ioc_.stop();
      join();
      return Status(Code::resource_exhausted, "cannot start the " + name + " threads: " + e.what());
    }
  }
  return ok_status();
}

void WorkerPool::join() {
  guard_.reset();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

}  // namespace berth::streaming
