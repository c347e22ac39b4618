// PullProgress: the pulls running now and how far each has come, told from the store itself
// (whole blobs, and the partial download a layer is streaming into), so that neither berthd nor a
// berth-pull helper counts bytes twice; and the log line each running pull writes at a steady
// interval, so an operator can tell a slow pull from a stuck one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "berth/image_manager.h"
#include "berth/mutex.h"
#include "blob_store.h"
#include "manifest.h"

namespace berth {

class PullProgressBoard {
 public:
  PullProgressBoard(const BlobStore& blobs, std::chrono::seconds log_interval)
      : blobs_(blobs), log_interval_(log_interval) {}

  // Listed while the handle lives; it logs the pull's progress every log_interval meanwhile.
  class Entry {
   public:
    Entry(PullProgressBoard& board, uint64_t id);
    ~Entry();
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

   private:
    PullProgressBoard& board_;
    uint64_t id_;
    std::mutex wake_mu_;
    std::condition_variable wake_;
    bool done_ = false;
    std::thread logger_;
  };
  std::unique_ptr<Entry> add(const std::string& reference, std::vector<Descriptor> blobs);

  std::vector<PullProgress> now() const;

 private:
  struct Pull {
    std::string reference;
    std::vector<Descriptor> blobs;
    std::chrono::steady_clock::time_point started;
  };
  PullProgress measure(const Pull& p) const;

  const BlobStore& blobs_;
  std::chrono::seconds log_interval_;
  mutable Mutex mu_;
  uint64_t next_id_ BERTH_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, Pull> pulls_ BERTH_GUARDED_BY(mu_);
};

}  // namespace berth
