// MemoryHeadroom: berthd's own memory against the limit of its cgroup (a MemoryMax= in its unit,
// a memory limit an operator set on the service or a parent slice). Near the limit berthd refuses
// new work (pods, containers, pulls and streaming sessions) with RESOURCE_EXHAUSTED rather than
// have the kernel kill a runtime, a plugin or berthd itself in the middle of a pod's start; calls that free memory
// (stop, remove) and every status and list call go on. What counts is what the kernel cannot reclaim: the usage less
// the page cache (a pull's layers fill the cgroup with file pages the kernel drops before it
// kills anything), shared memory kept in.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

class MemoryHeadroom {
 public:
  struct Reading {
    uint64_t working_set = 0;  // usage less reclaimable page cache
    uint64_t limit = 0;        // the lowest limit on the way to the root
  };
  // What one call may add while it runs, beside what the cgroup already holds: the programs it
  // starts in berthd's cgroup are what count (runc and crun, CNI plugins and berth-pull are Go or
  // C programs of several MiB each while they run; berth-monitor stays, at a few hundred KiB).
  static constexpr uint64_t kStartCost = 16ull << 20;    // StartContainer: the runtime's create
  static constexpr uint64_t kSandboxCost = 16ull << 20;  // RunPodSandbox: CNI plugins
  static constexpr uint64_t kPullCost = 16ull << 20;     // PullImage: berth-pull and its buffers
  static constexpr uint64_t kSmallCost = 2ull << 20;     // CreateContainer, a streaming session

  // Holds a call's cost until it ends.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(MemoryHeadroom* owner, uint64_t cost) : owner_(owner), cost_(cost) {}
    Ticket(Ticket&& o) noexcept : owner_(o.owner_), cost_(o.cost_) { o.owner_ = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket();

   private:
    MemoryHeadroom* owner_ = nullptr;
    uint64_t cost_ = 0;
  };

  // The cgroup of this process (from /proc/self/cgroup), v2 or v1's memory controller.
  static MemoryHeadroom* of_this_process();
  // A cgroup dir of its own (tests): `v2` says which files it has; `root` is where limits stop.
  MemoryHeadroom(std::string dir, std::string root, bool v2);
  MemoryHeadroom() = default;  // no cgroup: admits everything

  // Nothing when no limit applies (none set, or the files cannot be read).
  std::optional<Reading> read() const;
  // Room for a call of `cost`: the working set, the costs of the calls admitted and running, this
  // one's and the reserve within the limit. Waits up to `wait` for calls to end (a burst of
  // starts goes a few at a time, as the memory allows), then RESOURCE_EXHAUSTED naming `what`,
  // the working set, the limit and the cgroup; kubelet retries.
  Result<Ticket> enter(const std::string& what, uint64_t cost,
                       std::chrono::milliseconds wait = std::chrono::seconds(10));
  // What stays free for work already running: an eighth of the limit, at least 8 MiB.
  static uint64_t reserve_for(uint64_t limit);
  // Run (without the lock) when a call finds too little room, before it waits or is refused:
  // what berthd keeps only to go faster (idle pull helpers) is let go first. Set before calls come.
  void set_shed(std::function<void()> shed) { shed_ = std::move(shed); }

 private:
  void release(uint64_t cost);
  std::optional<Reading> reading(std::chrono::steady_clock::time_point now) BERTH_REQUIRES(mu_);

  std::string dir_, root_;
  bool v2_ = false;
  Mutex mu_;
  std::condition_variable released_;
  uint64_t in_flight_ BERTH_GUARDED_BY(mu_) = 0;
  std::chrono::steady_clock::time_point checked_ BERTH_GUARDED_BY(mu_);
  std::optional<Reading> last_ BERTH_GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point logged_ BERTH_GUARDED_BY(mu_);
  std::function<void()> shed_;
};

}  // namespace berth
