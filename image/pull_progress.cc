// A blob counts whole once it is in the store; before that, its partial download counts as far as
// it goes (the small blobs written to temp files count when stored). Stat calls only, no reads.
#include "pull_progress.h"

#include <sys/stat.h>

#include <spdlog/spdlog.h>

namespace berth {

PullProgress PullProgressBoard::measure(const Pull& p) const {
  PullProgress out{p.reference, 0, 0,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - p.started).count()};
  for (const auto& d : p.blobs) {
    uint64_t size = d.size > 0 ? static_cast<uint64_t>(d.size) : 0;
    out.total_bytes += size;
    struct stat st {};
    if (blobs_.has(d.digest))
      out.done_bytes += size;
    else if (::stat(blobs_.partial_path(d.digest).c_str(), &st) == 0)
      out.done_bytes += std::min(size, static_cast<uint64_t>(st.st_size));
  }
  return out;
}

std::vector<PullProgress> PullProgressBoard::now() const {
  std::vector<Pull> pulls;
  {
    MutexLock lock(mu_);
    for (const auto& [id, p] : pulls_) pulls.push_back(p);
  }
  std::vector<PullProgress> out;
  for (const auto& p : pulls) out.push_back(measure(p));
  return out;
}

std::unique_ptr<PullProgressBoard::Entry> PullProgressBoard::add(const std::string& reference,
                                                                 std::vector<Descriptor> blobs) {
  uint64_t id;
  {
    MutexLock lock(mu_);
    id = next_id_++;
    pulls_[id] = {reference, std::move(blobs), std::chrono::steady_clock::now()};
  }
  return std::make_unique<Entry>(*this, id);
}

PullProgressBoard::Entry::Entry(PullProgressBoard& board, uint64_t id) : board_(board), id_(id) {
  if (board_.log_interval_.count() <= 0) return;
  logger_ = std::thread([this] {
    std::unique_lock lock(wake_mu_);
    while (!wake_.wait_for(lock, board_.log_interval_, [this] { return done_; })) {
      Pull p;
      {
        MutexLock l(board_.mu_);
        p = board_.pulls_.at(id_);
      }
      PullProgress now = board_.measure(p);
      spdlog::info(
          "pull {}: {} of {} bytes ({:.0f}%) after {:.0f}s", now.reference, now.done_bytes, now.total_bytes,
          now.total_bytes ? 100.0 * static_cast<double>(now.done_bytes) / static_cast<double>(now.total_bytes) : 0.0,
          now.seconds);
    }
  });
}

PullProgressBoard::Entry::~Entry() {
  {
    std::lock_guard lock(wake_mu_);
    done_ = true;
  }
  wake_.notify_all();
  if (logger_.joinable()) logger_.join();
  MutexLock lock(board_.mu_);
  board_.pulls_.erase(id_);
}

}  // namespace berth
