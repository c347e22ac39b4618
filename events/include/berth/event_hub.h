// EventHub: fan-out of runtime events (container created/started/stopped/deleted) to any number of
// subscribers (GetContainerEvents streams). Publishing never waits for a subscriber: each one has
// a bounded queue, and a subscriber whose queue is full is dropped (its stream ends) instead of
// slowing the runtime or growing memory without bound.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "berth/mutex.h"

namespace berth {

template <class T>
class EventHub {
  struct Queue {
    uint64_t id = 0;
    Mutex mu;
    std::condition_variable cv;
    std::deque<T> items BERTH_GUARDED_BY(mu);
    bool dropped BERTH_GUARDED_BY(mu) = false;
    bool closed BERTH_GUARDED_BY(mu) = false;
    std::function<void()> on_dropped BERTH_GUARDED_BY(mu);  // run under mu, so never after the subscription is gone
  };

 public:
  // on_drop runs (outside every hub lock) with the id of a subscriber that was dropped.
  explicit EventHub(size_t queue_limit, std::function<void(uint64_t)> on_drop = {})
      : limit_(queue_limit), on_drop_(std::move(on_drop)) {}
  ~EventHub() { close(); }
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  class Subscription {
   public:
    Subscription(EventHub* hub, std::shared_ptr<Queue> q) : hub_(hub), q_(std::move(q)) {}
    ~Subscription() {
      {
        MutexLock lock(q_->mu);
        q_->on_dropped = nullptr;
      }
      hub_->remove(q_);
    }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

    uint64_t id() const { return q_->id; }
    // Called (once, on the publishing thread; it must not block) when this subscriber is dropped:
    // a stream blocked writing to a client that stopped reading can be cancelled by it.
    void set_on_dropped(std::function<void()> f) {
      MutexLock lock(q_->mu);
      q_->on_dropped = std::move(f);
    }
    // The next event, or nullopt when none came within `timeout`, or the subscription was
    // dropped or the hub closed (see ended()).
    std::optional<T> next(std::chrono::milliseconds timeout) {
      MutexLock lock(q_->mu);
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      while (q_->items.empty() && !q_->dropped && !q_->closed)
        if (q_->cv.wait_until(lock.native(), deadline) == std::cv_status::timeout) break;
      if (q_->dropped || q_->items.empty()) return std::nullopt;
      T out = std::move(q_->items.front());
      q_->items.pop_front();
      return out;
    }
    bool dropped() const {
      MutexLock lock(q_->mu);
      return q_->dropped;
    }
    bool ended() const {
      MutexLock lock(q_->mu);
      return q_->dropped || (q_->closed && q_->items.empty());
    }

   private:
    EventHub* hub_;
    std::shared_ptr<Queue> q_;
  };

  std::unique_ptr<Subscription> subscribe() {
    auto q = std::make_shared<Queue>();
    MutexLock lock(mu_);
    q->id = ++next_id_;
    {
      MutexLock ql(q->mu);
      q->closed = closed_;
    }
    queues_.push_back(q);
    return std::make_unique<Subscription>(this, q);
  }

  void publish(const T& event) {
    std::vector<uint64_t> dropped;
    {
      MutexLock lock(mu_);
      for (auto it = queues_.begin(); it != queues_.end();) {
        Queue& q = **it;
        MutexLock ql(q.mu);
        if (q.items.size() >= limit_) {
          q.dropped = true;
          q.items.clear();  // a dropped subscriber holds no memory
          if (q.on_dropped) q.on_dropped();
          ql.unlock();
          q.cv.notify_all();
          dropped.push_back(q.id);
          it = queues_.erase(it);
          continue;
        }
        q.items.push_back(event);
        ql.unlock();
        q.cv.notify_one();
        ++it;
      }
    }
    if (on_drop_)
      for (uint64_t id : dropped) on_drop_(id);
  }

  size_t subscriber_count() const {
    MutexLock lock(mu_);
    return queues_.size();
  }

  // Ends every subscription (daemon shutdown): waiting readers wake and see ended().
  void close() {
    MutexLock lock(mu_);
    closed_ = true;
    for (auto& q : queues_) {
      {
        MutexLock ql(q->mu);
        q->closed = true;
      }
      q->cv.notify_all();
    }
  }

 private:
  void remove(const std::shared_ptr<Queue>& q) {
    MutexLock lock(mu_);
    std::erase(queues_, q);
  }

  const size_t limit_;
  std::function<void(uint64_t)> on_drop_;
  mutable Mutex mu_;
  std::vector<std::shared_ptr<Queue>> queues_ BERTH_GUARDED_BY(mu_);
  uint64_t next_id_ BERTH_GUARDED_BY(mu_) = 0;
  bool closed_ BERTH_GUARDED_BY(mu_) = false;
};

}  // namespace berth
