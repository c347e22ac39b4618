// The state ImageManager's files share (internal to image/): the index, the content store, the
// pulls and layer unpacks in flight, the holds and leases that keep blobs alive. Locking: `mu`
// guards everything here that changes; it is never held across network work, an unpack or a file
// deletion (garbage is moved into the trash under it and deleted after, empty_trash).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <semaphore>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "berth/image_manager.h"
#include "berth/mutex.h"
#include "blob_store.h"
#include "image_index.h"
#include "manifest.h"
#include "pull_helper_pool.h"
#include "pull_progress.h"
#include "pull_steps.h"
#include "registry_client.h"

namespace berth {

// One pull of one reference, shared by every PullImage asking for it at the same time. The work
// stops once no caller waits for it any more (each gave up, or its client cancelled) or its
// deadline passed, and its result is always set, whatever ends it.
struct PullJob {
  std::shared_future<Result<ImageRecord>> done;
  std::atomic<int> waiting{0};
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Why the work should stop now, or OK to go on.
  Status should_stop() const;
};

struct ImageManager::Impl {
  ImageManagerOptions opt;
  std::unique_ptr<BlobStore> blobs;
  std::unique_ptr<PullProgressBoard> progress;  // made with blobs
  mutable Mutex mu;
  ImageIndex index BERTH_GUARDED_BY(mu);
  std::map<std::string, std::shared_ptr<PullJob>> pulls BERTH_GUARDED_BY(mu);  // by reference and credentials_key
  std::map<std::string, std::shared_future<Status>> layer_work BERTH_GUARDED_BY(mu);  // by layer digest
  std::map<std::string, int> holds BERTH_GUARDED_BY(mu);                              // by image id
  std::map<std::string, std::vector<std::string>> held_layers BERTH_GUARDED_BY(mu);   // by image id
  // digest -> in-flight pulls that fetched, unpacked or reuse it
  std::map<std::string, int> leased BERTH_GUARDED_BY(mu);
  // Removed records loaded at open whose holders may not have been recovered yet: kept until
  // finish_recovery even when their hold count drops to zero meanwhile.
  std::set<std::string> unrecovered BERTH_GUARDED_BY(mu);
  // Digests a failed pull had fetched or unpacked, and when it failed (for a partial download found
  // at open: when it was last written): spared by garbage collection within opt.keep_for_retry and
  // opt.keep_for_retry_bytes (kept_for_retry_locked), then collected by retry_expiry.
  struct KeptForRetry {
    std::chrono::steady_clock::time_point failed;
    uint64_t snapshot_bytes = 0;  // its unpacked layer's, measured when the pull failed
  };
  std::map<std::string, KeptForRetry> failed_pull_digests BERTH_GUARDED_BY(mu);
  std::counting_semaphore<64> fetch_slots;
  std::atomic<uint64_t> trash_serial{0};
  std::unique_ptr<PullHelperPool> helpers;  // when opt.pull_helper is set
  std::condition_variable retry_expiry_cv;
  bool stopping BERTH_GUARDED_BY(mu) = false;
  std::thread retry_expiry;  // started by the first thing kept for a retry; joined by ~Impl

  // The registry settings pulls start with (opt.registry until set_registry_hosts replaces them at a
  // config reload); a running pull keeps the ones it started with.
  mutable Mutex registry_mu;
  std::shared_ptr<const RegistryOptions> registry_now BERTH_GUARDED_BY(registry_mu);

  explicit Impl(ImageManagerOptions o)
      : opt(std::move(o)),
        index(opt.dir + "/index.json"),
        fetch_slots(std::clamp(opt.max_parallel_layer_fetches, 1, 64)),
        registry_now(std::make_shared<const RegistryOptions>(opt.registry)) {
    if (!opt.pull_helper.empty())
      helpers = std::make_unique<PullHelperPool>(
          PullHelperPool::Options{.binary = opt.pull_helper, .store = opt.dir, .idle = opt.pull_helper_idle});
  }
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  std::shared_ptr<const RegistryOptions> registry() const {
    MutexLock lock(registry_mu);
    return registry_now;
  }

  std::string snapshot_dir(const std::string& digest) const { return opt.dir + "/snapshots/" + digest.substr(7); }
  std::string trash_dir() const { return opt.dir + "/trash"; }
  // How many layers one overlay mount of berth's can stack: the mount options (every layer's
  // snapshot path, and a container's upper and work dirs) must fit in one page.
  size_t mountable_layers() const;

  class PullLease;
  using StopCheck = PullStopCheck;
  // The registry and unpack steps of one pull (or of one of its layer threads): a berth-pull
  // helper when opt.pull_helper is set (berthd), else in this process.
  Result<std::unique_ptr<PullSteps>> open_steps(const ImageReference& ref, const RegistryCredentials& creds,
                                                const StopCheck& stop);
  Result<ImageRecord> pull_and_record(const ImageReference& ref, const RegistryCredentials& creds, bool pin,
                                      const std::optional<std::string>& handler, const StopCheck& stop);
  Result<ImageRecord> do_pull(const ImageReference& ref, const RegistryCredentials& creds, bool pin,
                              const std::optional<std::string>& handler, PullLease& lease, const StopCheck& stop);
  // `steps` serves this thread; the pool's other threads open their own (lazily, when a layer
  // needs fetching at all).
  Status fetch_layers(PullSteps& steps, const ImageReference& ref, const RegistryCredentials& creds,
                      const std::vector<Descriptor>& layers, const StopCheck& stop);
  Status fetch_blob(PullSteps& steps, const Descriptor& d, const std::string& what);
  // The signature policy's verdict on the manifest `digest` of `ref`: the rule that accepted it,
  // or FAILED_PRECONDITION. The signature payloads it fetches are leased, never recorded.
  Result<std::string> check_signatures(PullSteps& steps, const ImageReference& ref, const std::string& digest,
                                       PullLease& lease);
  using StepsSource = std::function<Result<PullSteps*>()>;
  Status ensure_layer(const StepsSource& steps, const Descriptor& d, const std::string& what, const StopCheck& stop);
  Status ensure_layer_once(const StepsSource& steps, const Descriptor& d, const std::string& what,
                           const StopCheck& stop);
  // With mu held: moves what no image, hold or lease uses into the trash; returns the paths there.
  std::vector<std::string> collect_garbage_locked() BERTH_REQUIRES(mu);
  // Of what nothing else uses, what is kept for a retry: the failed pulls' digests (whole blobs,
  // snapshots, partial downloads), newest first, while young enough and within the byte budget.
  // Forgets the rest.
  std::set<std::string> kept_for_retry_locked() BERTH_REQUIRES(mu);
  // Whether a collection would find something kept for a retry to expire (cheap: no tree walk).
  bool holds_for_retry_locked() const BERTH_REQUIRES(mu);
  // Without mu: deletes what collect_garbage_locked moved aside.
  void empty_trash(const std::vector<std::string>& paths) const;
  // Records what a failed pull keeps for a retry (its snapshots measured now, without mu) and has
  // retry_expiry collect it when its time is up, whether or not anything else happens meanwhile.
  void keep_for_retry(const std::vector<std::string>& digests);
  void wake_retry_expiry_locked() BERTH_REQUIRES(mu);
  void run_retry_expiry();
  Status pin_locked(const std::string& id) BERTH_REQUIRES(mu);
  void hold_locked(const std::string& image_id) BERTH_REQUIRES(mu);
};

// The blobs and snapshots one pull uses stay live for collect_garbage until the pull has recorded
// its image or failed. A digest is leased *before* the pull looks for it in the store, so a
// collection (a RemoveImage, a container's release) either ran before the look, which then finds
// it missing and fetches it, or runs after and spares it.
class ImageManager::Impl::PullLease {
 public:
  explicit PullLease(Impl& impl) : impl_(impl) {}
  ~PullLease() {
    MutexLock lock(impl_.mu);
    end_locked(impl_);
  }
  PullLease(const PullLease&) = delete;
  PullLease& operator=(const PullLease&) = delete;

  const std::vector<std::string>& digests() const { return digests_; }
  // Set when the pull stored blobs no image will name (signature payloads): collected after it.
  bool collect_after = false;
  void keep(const std::string& digest) {
    MutexLock lock(impl_.mu);
    if (std::find(digests_.begin(), digests_.end(), digest) != digests_.end()) return;
    digests_.push_back(digest);
    ++impl_.leased[digest];
  }
  // Once the image is in the index (or the pull gave up), it no longer needs this. `impl` is the
  // lease's own (named here so that the analysis sees the caller's mu is the one held).
  void end_locked(Impl& impl) BERTH_REQUIRES(impl.mu) {
    for (const auto& d : digests_)
      if (auto it = impl.leased.find(d); it != impl.leased.end() && --it->second == 0) impl.leased.erase(it);
    digests_.clear();
  }

 private:
  Impl& impl_;
  std::vector<std::string> digests_;  // under impl_.mu
};

}  // namespace berth
