// What every connection of the streaming server shares: the backend, the thread pools for blocking
// backend calls, the configuration, and the registry of live connections (for shutdown and
// active_sessions()).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "berth/mutex.h"
#include "berth/streaming_server.h"
#include "channel.h"
#include "worker_pool.h"

namespace berth::streaming {

class SessionRegistry {
 public:
  uint64_t add(std::weak_ptr<Connection> conn, boost::asio::any_io_executor ex) {
    MutexLock lock(mu_);
    entries_[++next_] = Entry{std::move(conn), std::move(ex)};
    return next_;
  }
  void remove(uint64_t id) {
    MutexLock lock(mu_);
    entries_.erase(id);
  }
  size_t active() {
    MutexLock lock(mu_);
    return entries_.size();
  }
  // Aborts every live connection on its own strand.
  void abort_all() {
    MutexLock lock(mu_);
    for (auto& [id, e] : entries_) {
      boost::asio::post(e.ex, [weak = e.conn] {
        if (auto c = weak.lock()) c->abort();
      });
    }
  }

 private:
  struct Entry {
    std::weak_ptr<Connection> conn;
    boost::asio::any_io_executor ex;
  };
  Mutex mu_;
  std::map<uint64_t, Entry> entries_ BERTH_GUARDED_BY(mu_);
  uint64_t next_ BERTH_GUARDED_BY(mu_) = 0;
};

struct ServerContext {
  StreamingBackend& backend;
  // Exec and attach starts, outcomes and cancellations run on `workers`; port-forward connects
  // (which may wait for a pod's listener up to their timeout) on `connectors`, so that no number
  // of them can hold up an exec.
  WorkerPool& workers;
  WorkerPool& connectors;
  StreamingServerConfig config;
  SessionRegistry registry;
  // Blocking calls not yet over, their captures included (blocking_work.h); the io_context may go
  // only when it is zero.
  std::atomic<int> pending_work{0};
  std::atomic<int> pending_requests{0};  // connections whose HTTP request is being read or answered
  std::atomic<bool> refusing_requests{false};
  // config.idle_timeout as it is now (StreamingServer::set_timeouts changes it at a config reload);
  // a session keeps the one it began with. Set from config when the server starts.
  std::atomic<int64_t> idle_timeout_ms{0};
  std::chrono::milliseconds idle_timeout() const { return std::chrono::milliseconds(idle_timeout_ms.load()); }
};

}  // namespace berth::streaming
