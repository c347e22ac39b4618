// See memory_headroom.h.
#include "memory_headroom.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "berth/file_text.h"

namespace berth {

namespace {

std::optional<uint64_t> number_in(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word == "max") return std::nullopt;
  try {
    return std::stoull(word);
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<uint64_t> stat_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return std::nullopt;
}

// v1 reports "no limit" as the largest page-aligned signed value.
constexpr uint64_t kNoLimit = uint64_t(1) << 60;

}  // namespace

MemoryHeadroom::MemoryHeadroom(std::string dir, std::string root, bool v2)
    : dir_(std::move(dir)), root_(std::move(root)), v2_(v2) {}

MemoryHeadroom* MemoryHeadroom::of_this_process() {
  std::istringstream in(read_text_file("/proc/self/cgroup"));
  std::string v1_path, v2_path;
  for (std::string line; std::getline(in, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
    std::istringstream names(controllers);
    for (std::string n; std::getline(names, n, ',');)
      if (n == "memory") v1_path = path;
  }
  if (!v1_path.empty() && ::access("/sys/fs/cgroup/memory/memory.usage_in_bytes", F_OK) == 0)
    return new MemoryHeadroom("/sys/fs/cgroup/memory" + (v1_path == "/" ? "" : v1_path), "/sys/fs/cgroup/memory",
                              false);
  if (!v2_path.empty() && ::access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
    return new MemoryHeadroom("/sys/fs/cgroup" + (v2_path == "/" ? "" : v2_path), "/sys/fs/cgroup", true);
  return new MemoryHeadroom();
}

uint64_t MemoryHeadroom::reserve_for(uint64_t limit) { return std::max<uint64_t>(limit / 8, 8ull << 20); }

std::optional<MemoryHeadroom::Reading> MemoryHeadroom::read() const {
  if (dir_.empty()) return std::nullopt;
  Reading r;
  // The same reading in each version's words.
  const std::string stat = dir_ + "/memory.stat";
  auto usage = number_in(dir_ + (v2_ ? "/memory.current" : "/memory.usage_in_bytes"));
  if (!usage) return std::nullopt;
  uint64_t cache = stat_field(stat, v2_ ? "file" : "total_cache").value_or(0);
  uint64_t shmem = stat_field(stat, v2_ ? "shmem" : "total_shmem").value_or(0);
  uint64_t reclaimable = cache > shmem ? cache - shmem : 0;
  r.working_set = *usage > reclaimable ? *usage - reclaimable : 0;
  if (v2_) {
    // Every ancestor's memory.max bounds it too (a slice's limit); the root has none.
    for (std::string d = dir_; d.size() > root_.size(); d = d.substr(0, d.rfind('/')))
      if (auto max = number_in(d + "/memory.max"); max && (r.limit == 0 || *max < r.limit)) r.limit = *max;
  } else {
    r.limit = stat_field(stat, "hierarchical_memory_limit").value_or(0);
    if (r.limit >= kNoLimit) r.limit = 0;
  }
  if (r.limit == 0) return std::nullopt;
  return r;
}

std::optional<MemoryHeadroom::Reading> MemoryHeadroom::reading(std::chrono::steady_clock::time_point now) {
  if (now - checked_ > std::chrono::milliseconds(50)) {
    last_ = read();
    checked_ = now;
  }
  return last_;
}

Result<MemoryHeadroom::Ticket> MemoryHeadroom::enter(const std::string& what, uint64_t cost,
                                                     std::chrono::milliseconds wait) {
  if (dir_.empty()) return Ticket();
  const auto deadline = std::chrono::steady_clock::now() + wait;
  bool shed = false;
  MutexLock lock(mu_);
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    auto r = reading(now);
    if (!r) return Ticket();
    if (r->working_set + in_flight_ + cost + reserve_for(r->limit) <= r->limit) {
      in_flight_ += cost;
      return Ticket(this, cost);
    }
    if (!shed && shed_) {
      shed = true;
      lock.unlock();
      shed_();
      lock.lock();
      checked_ = {};  // read the cgroup again: what was let go is no longer charged
      continue;
    }
    if (now >= deadline) {
      std::string why = what + ": berthd's memory is near its cgroup's limit (working set " +
                        std::to_string(r->working_set >> 20) + " MiB, " + std::to_string(in_flight_ >> 20) +
                        " MiB more for calls under way, of " + std::to_string(r->limit >> 20) + " MiB in " + dir_ +
                        "); new work is refused until it falls, retry later";
      if (now - logged_ > std::chrono::seconds(10)) {
        spdlog::warn("berthd: {}", why);
        logged_ = now;
      }
      return Status(Code::resource_exhausted, why);
    }
    // Woken when a call ends; the cgroup is read again in any case (memory also falls by itself).
    released_.wait_until(lock.native(), std::min(deadline, now + std::chrono::milliseconds(50)));
  }
}

void MemoryHeadroom::release(uint64_t cost) {
  {
    MutexLock lock(mu_);
    in_flight_ -= cost;
  }
  released_.notify_all();
}

MemoryHeadroom::Ticket::~Ticket() {
  if (owner_) owner_->release(cost_);
}

}  // namespace berth
