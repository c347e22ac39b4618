// CallLimits: the calls that can run long (image pulls, ExecSync probes, event streams, sandbox and
// container lifecycle calls waiting on runtimes and plugins) may each take only a share of
// berthd's gRPC threads (max_concurrent_rpcs), so a flood of stalled ones never leaves kubelet's
// Status, List and status calls without a thread. A call past its share is refused at once with
// RESOURCE_EXHAUSTED (waiting would hold the very thread the limit protects); kubelet retries.
#pragma once

#include <atomic>
#include <string>

#include "berth/status.h"

namespace berth {

enum class CallClass { pull, exec_sync, events, lifecycle };

class CallLimits {
 public:
  explicit CallLimits(int max_concurrent_rpcs);

  // Holds one place of its class while it lives.
  class Slot {
   public:
    Slot() = default;
    explicit Slot(std::atomic<int>* in_use) : in_use_(in_use) {}
    Slot(Slot&& o) noexcept : in_use_(o.in_use_) { o.in_use_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (in_use_) in_use_->fetch_sub(1);
    }

   private:
    std::atomic<int>* in_use_ = nullptr;
  };

  // A place for one call of `c`, or RESOURCE_EXHAUSTED naming the class and its share.
  Result<Slot> enter(CallClass c);
  int limit(CallClass c) const { return limits_[static_cast<int>(c)]; }

 private:
  int limits_[4];
  std::atomic<int> in_use_[4] = {};
};

}  // namespace berth
