// PullImage: one shared job per reference, the manifest checked before anything is fetched (its
// size, its number of layers against what an overlay mount can stack, the config's size), then the
// layers by a pool of at most max_parallel_layer_fetches threads per pull, each layer fetched and
// unpacked once whatever the number of pulls needing it. A job stops as soon as no caller waits
// for it any more or its deadline passes; every path that ends it, an exception included,
// completes its shared result, so a later pull of the same reference never waits on a dead one.
// The registry transfers and the unpacks are PullSteps: in berthd a berth-pull helper per pull
// and per layer thread, kept between pulls (pull_helper_pool.h); everything else stays here.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <spdlog/spdlog.h>
#include <thread>

#include "berth/fault_point.h"
#include "berth/file_tree.h"
#include "berth/image_reference.h"
#include "berth/mutex.h"
#include "image_store_state.h"
#include "pull_libraries.h"
#include "pull_worker_protocol.h"
#include "registry_credentials.h"

namespace berth {

namespace {

// An image config is a small JSON document; a descriptor claiming more is not fetched.
constexpr int64_t kMaxConfigBytes = 16 << 20;

// Completes a promise on every way out of a scope: the value set, or an error if none was.
template <class T>
class PromiseKeeper {
 public:
  explicit PromiseKeeper(std::promise<T>& p) : p_(p) {}
  ~PromiseKeeper() {
    if (!set_) p_.set_value(T(internal_error("the work ended without a result")));
  }
  void set(T v) {
    p_.set_value(std::move(v));
    set_ = true;
  }

 private:
  std::promise<T>& p_;
  bool set_ = false;
};

// In-process steps keep the registry settings they were opened with alive for as long as they run
// (their client holds a reference), whatever a config reload does meanwhile.
class RegistryHeldSteps final : public PullSteps {
 public:
  RegistryHeldSteps(std::shared_ptr<const RegistryOptions> registry, const ImageReference& ref,
                    const RegistryCredentials& creds, BlobStore& blobs, PullStopCheck stop)
      : registry_(std::move(registry)), steps_(in_process_pull_steps(*registry_, ref, creds, blobs, std::move(stop))) {}
  Result<FetchedManifest> get_manifest(const std::string& tag_or_digest) override {
    return steps_->get_manifest(tag_or_digest);
  }
  Status fetch_blob(const Descriptor& d, const std::string& what) override { return steps_->fetch_blob(d, what); }
  Status unpack(const std::string& blob_path, const std::string& dest, const std::string& what) override {
    return steps_->unpack(blob_path, dest, what);
  }

 private:
  std::shared_ptr<const RegistryOptions> registry_;  // declared first: outlives the steps
  std::unique_ptr<PullSteps> steps_;
};

}  // namespace

Status PullJob::should_stop() const {
  if (waiting.load() <= 0) return Status(Code::cancelled, "every client of this pull gave up");
  if (std::chrono::steady_clock::now() >= deadline) return Status(Code::deadline_exceeded, "the pull ran out of time");
  return ok_status();
}

size_t ImageManager::Impl::mountable_layers() const {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t snapshot = snapshot_dir(std::string(71, '0')).size();
  const size_t layer_dir = opt.containers_dir.size() + 1 + 64 + 6;  // <containers>/<id>/upper
  const size_t fixed = std::strlen("lowerdir=,upperdir=,workdir=") + 2 * layer_dir + 1;
  return page > fixed ? (page - fixed) / (snapshot + 1) : 0;
}

Result<std::unique_ptr<PullSteps>> ImageManager::Impl::open_steps(const ImageReference& ref,
                                                                  const RegistryCredentials& creds,
                                                                  const StopCheck& stop) {
  if (opt.pull_helper.empty()) {
    // libcurl and libarchive are loaded (and curl's TLS set up) at the first pull, not at start
    // (pull_libraries.cc).
    auto libs = pull_libraries();
    if (!libs.ok()) return libs.status();
    return std::unique_ptr<PullSteps>(std::make_unique<RegistryHeldSteps>(registry(), ref, creds, *blobs, stop));
  }
  auto registry_options = registry();
  auto on_bytes = registry_options->on_bytes;
  return helpers->acquire(std::move(registry_options), ref, creds, std::move(on_bytes), stop);
}

Status ImageManager::Impl::fetch_blob(PullSteps& steps, const Descriptor& d, const std::string& what) {
  if (blobs->has(d.digest)) return ok_status();
  Status s = steps.fetch_blob(d, what);
  if (s.ok()) fault_point(FaultPoint::pull_image_blob_stored);
  return s;
}

Status ImageManager::Impl::ensure_layer(const StepsSource& source, const Descriptor& d, const std::string& what,
                                        const StopCheck& stop) {
  std::string snap = snapshot_dir(d.digest);
  struct stat st {};
  if (::stat(snap.c_str(), &st) == 0) return ok_status();
  // A slot of the node-wide download budget; waiting for one stops with the pull.
  while (!fetch_slots.try_acquire_for(std::chrono::milliseconds(200)))
    if (Status s = stop(); !s.ok()) return s;
  auto steps = source();
  Status s = steps.ok() ? fetch_blob(**steps, d, what) : steps.status();
  fetch_slots.release();
  if (!s.ok()) return s;
  if (Status st2 = stop(); !st2.ok()) return st2;
  std::string temp = snap + ".unpacking";
  if (Status r = remove_tree(temp); !r.ok()) return r.context(what);
  if (::mkdir(temp.c_str(), 0755) != 0) return errno_status(errno, what + ": mkdir " + temp);
  fault_point(FaultPoint::pull_image_layer_unpacking);
  s = (*steps)->unpack(blobs->path(d.digest), temp, what);
  if (s.ok() && ::rename(temp.c_str(), snap.c_str()) != 0) s = errno_status(errno, what + ": rename snapshot");
  if (s.ok()) fault_point(FaultPoint::pull_image_layer_unpacked);
  if (!s.ok())
    if (Status r = remove_tree(temp); !r.ok()) spdlog::warn("images: {}: {}", what, r.message());
  return s;
}

// One fetch+unpack per layer digest at a time, shared by every pull that needs it.
Status ImageManager::Impl::ensure_layer_once(const StepsSource& steps, const Descriptor& d, const std::string& what,
                                             const StopCheck& stop) {
  for (;;) {
    std::promise<Status> mine;
    std::shared_future<Status> shared;
    bool owner = false;
    {
      MutexLock lock(mu);
      auto it = layer_work.find(d.digest);
      if (it != layer_work.end()) {
        shared = it->second;
      } else {
        shared = mine.get_future().share();
        layer_work[d.digest] = shared;
        owner = true;
      }
    }
    if (!owner) {
      // Another pull is at it: wait, but stop with this pull.
      while (shared.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready)
        if (Status s = stop(); !s.ok()) return s;
      Status s = shared.get();
      // That pull was given up by its clients: this one still wants the layer, and does it itself.
      if (s.code() == Code::cancelled || s.code() == Code::deadline_exceeded) continue;
      return s;
    }
    Status s;
    {
      PromiseKeeper<Status> keeper(mine);
      try {
        s = ensure_layer(steps, d, what, stop);
      } catch (const std::exception& e) {
        s = internal_error(what + ": " + e.what());
      }
      keeper.set(s);
    }
    MutexLock lock(mu);
    layer_work.erase(d.digest);
    return s;
  }
}

// A pool of at most max_parallel_layer_fetches threads takes the layers in turn; the first error
// stops the others at their next layer. A thread that cannot be started leaves its share to the
// others (and to this thread, which works too).
Status ImageManager::Impl::fetch_layers(PullSteps& own, const ImageReference& ref, const RegistryCredentials& creds,
                                        const std::vector<Descriptor>& layers, const StopCheck& stop) {
  std::atomic<size_t> next{0};
  Mutex error_mu;
  Status first_error;
  auto failed = [&] {
    MutexLock lock(error_mu);
    return !first_error.ok();
  };
  auto work = [&](bool pool_thread) {
    // A pool thread's steps (a berth-pull helper) start with its first layer that is missing and
    // end with the thread.
    std::unique_ptr<PullSteps> opened;
    StepsSource steps = [&]() -> Result<PullSteps*> {
      if (!pool_thread) return &own;
      if (!opened) {
        auto o = open_steps(ref, creds, stop);
        if (!o.ok()) return o.status();
        opened = std::move(*o);
      }
      return opened.get();
    };
    for (size_t i; !failed() && (i = next++) < layers.size();) {
      Status s;
      try {
        s = ensure_layer_once(steps, layers[i], "layer " + layers[i].digest, stop);
      } catch (const std::exception& e) {
        s = internal_error("layer " + layers[i].digest + ": " + e.what());
      }
      if (s.ok()) continue;
      MutexLock lock(error_mu);
      if (first_error.ok()) first_error = s;
    }
  };
  size_t helpers =
      std::min<size_t>(layers.size(), static_cast<size_t>(std::clamp(opt.max_parallel_layer_fetches, 1, 64))) - 1;
  std::vector<std::thread> pool;
  for (size_t i = 0; i < helpers; ++i) {
    try {
      pool.emplace_back(work, true);
    } catch (const std::system_error& e) {
      spdlog::warn("images: cannot start a layer fetch thread ({}); fewer layers at once", e.what());
      break;
    }
  }
  work(false);
  for (auto& t : pool) t.join();
  return first_error;
}

// A failed pull keeps what it stored (manifests, config, layer blobs, the snapshots of the layers
// that did finish, partial downloads) for a retry within keep_for_retry; then garbage collection
// takes what nothing else uses. Another pull's lease or an image keeps what it shares with them.
Result<ImageRecord> ImageManager::Impl::pull_and_record(const ImageReference& ref, const RegistryCredentials& creds,
                                                        bool pin, const std::optional<std::string>& handler,
                                                        const StopCheck& stop) {
  PullLease lease(*this);
  Result<ImageRecord> r = internal_error("pull " + ref.string() + ": not done");
  try {
    r = do_pull(ref, creds, pin, handler, lease, stop);
  } catch (const std::exception& e) {
    r = internal_error("pull " + ref.string() + ": " + e.what());
  }
  std::vector<std::string> trash;
  // What it fetched stays for the retry (kubelet's back-off) when the registry, the link or the
  // caller failed it; not when its bytes were wrong or the disk full. Measured before the lease
  // ends, which keeps it from collection meanwhile.
  const Code failed_with = r.ok() ? Code::ok : r.status().code();
  const bool retry =
      (failed_with == Code::unavailable || failed_with == Code::deadline_exceeded || failed_with == Code::cancelled) &&
      opt.keep_for_retry.count() > 0;
  if (retry) keep_for_retry(lease.digests());
  {
    MutexLock lock(mu);
    if (!r.ok()) {
      if (!retry)
        for (const auto& d : lease.digests())
          if (auto it = leased.find(d); it != leased.end() && it->second == 1 && !failed_pull_digests.count(d))
            ::unlink(blobs->partial_path(d).c_str());  // no other pull is writing it
      lease.end_locked(*this);
      trash = collect_garbage_locked();
    } else if (holds_for_retry_locked() || lease.collect_after) {
      for (const auto& d : r->layers) failed_pull_digests.erase(d);
      failed_pull_digests.erase(r->id);
      lease.end_locked(*this);
      trash = collect_garbage_locked();  // what was kept and has expired, signature payloads
    }
  }
  empty_trash(trash);
  return r;
}

Result<ImageRecord> ImageManager::Impl::do_pull(const ImageReference& ref, const RegistryCredentials& creds, bool pin,
                                                const std::optional<std::string>& handler, PullLease& lease,
                                                const StopCheck& stop) {
  std::string what = "pull " + ref.string();
  auto opened = open_steps(ref, creds, stop);
  if (!opened.ok()) return opened.status().context(what);
  PullSteps& client = **opened;
  auto top = client.get_manifest(ref.digest.empty() ? ref.tag : ref.digest);
  if (!top.ok()) return top.status().context(what);
  auto parsed = parse_manifest(top->body, top->media_type, "manifest " + top->digest);
  if (!parsed.ok()) return parsed.status().context(what);
  // Before anything of the image is stored: a refused image leaves nothing.
  auto accepted_by = check_signatures(client, ref, top->digest, lease);
  if (!accepted_by.ok()) return accepted_by.status().context(what);
  FetchedManifest image_manifest = *top;
  if (parsed->is_index) {
    auto pick = select_platform(*parsed, host_platform(), "index " + top->digest);
    if (!pick.ok()) return pick.status().context(what);
    auto m = client.get_manifest(pick->digest);
    if (!m.ok()) return m.status().context(what);
    image_manifest = *m;
    parsed = parse_manifest(m->body, m->media_type, "manifest " + m->digest);
    if (!parsed.ok()) return parsed.status().context(what);
    if (parsed->is_index) return invalid_argument(what + ": index " + pick->digest + " points at another index");
  }
  // Refused before anything is fetched: more layers than one overlay mount of berth's can stack
  // (or than berth.toml allows), or a config no image has.
  const size_t max_layers = std::min<size_t>(mountable_layers(), static_cast<size_t>(std::max(opt.max_layers, 1)));
  if (parsed->layers.size() > max_layers)
    return Status(Code::failed_precondition,
                  what + ": the image has " + std::to_string(parsed->layers.size()) +
                      " layers; berth runs images of at most " + std::to_string(max_layers) +
                      " (max_image_layers, and what one overlay mount of its store can stack)");
  if (parsed->config.size > kMaxConfigBytes)
    return invalid_argument(what + ": config " + parsed->config.digest + " claims " +
                            std::to_string(parsed->config.size) + " bytes; an image config is at most " +
                            std::to_string(kMaxConfigBytes >> 20) + " MiB");
  std::vector<Descriptor> blobs_of_image{parsed->config};
  blobs_of_image.insert(blobs_of_image.end(), parsed->layers.begin(), parsed->layers.end());
  auto listed = progress->add(ref.string(), std::move(blobs_of_image));
  lease.keep(image_manifest.digest);
  lease.keep(top->digest);
  lease.keep(parsed->config.digest);
  for (const auto& layer : parsed->layers) lease.keep(layer.digest);
  fault_point(FaultPoint::pull_image_manifest_fetched);
  if (Status s = blobs->put(image_manifest.digest, image_manifest.body); !s.ok()) return s.context(what);
  if (top->digest != image_manifest.digest)
    if (Status s = blobs->put(top->digest, top->body); !s.ok()) return s.context(what);

  // The config is small and asked for after the layers, so a helper fetches it beside them rather
  // than each waiting for the registry's answer in turn (containerd fetches an image's blobs
  // concurrently too). An image whose config does not read is still refused whole: nothing is
  // recorded, and what its pull fetched is collected.
  if (parsed->config.size >= 0 && parsed->config.size <= pull_protocol::kMaxPrefetchBytes &&
      !blobs->has(parsed->config.digest))
    client.prefetch(parsed->config);
  if (Status s = fetch_layers(client, ref, creds, parsed->layers, stop); !s.ok()) return s.context(what);

  if (Status s = fetch_blob(client, parsed->config, "config " + parsed->config.digest); !s.ok()) return s.context(what);
  auto config = blobs->read(parsed->config.digest, kMaxConfigBytes);
  if (!config.ok()) return config.status().context(what);
  auto summary = summarise_image_config(*config);
  if (!summary.ok()) return summary.status().context("config " + parsed->config.digest).context(what);

  ImageRecord r;
  r.id = parsed->config.digest;
  // In "repo:tag@digest" the digest alone was pulled; the tag was never resolved, so it names
  // nothing here (docker and containerd ignore it too).
  if (!ref.tag.empty() && ref.digest.empty()) r.repo_tags.push_back(ref.name() + ":" + ref.tag);
  r.repo_digests.push_back(ref.name() + "@" + top->digest);
  r.size = static_cast<uint64_t>(parsed->config.size);
  for (const auto& l : parsed->layers) {
    r.layers.push_back(l.digest);
    r.size += static_cast<uint64_t>(l.size);
  }
  r.config_json = *config;
  r.config = std::move(*summary);
  r.pinned = pin;
  if (handler) r.runtime_handlers = {*handler};
  r.accepted_by = *accepted_by;
  MutexLock lock(mu);
  bool changed = index.upsert(r);
  lease.end_locked(*this);  // the record keeps it all live from here
  if (changed)
    if (Status s = index.save(); !s.ok()) return s.context(what);
  fault_point(FaultPoint::pull_image_recorded);
  return *index.find(r.id);
}

Result<ImageRecord> ImageManager::pull(const std::string& reference, const RegistryCredentials& given, bool pin,
                                       const std::function<bool()>& cancelled,
                                       const std::optional<std::string>& runtime_handler) {
  auto ref = parse_image_reference(reference);
  if (!ref.ok()) return ref.status();
  const std::string key = ref->string();
  // Credentials given for another registry are not this pull's; and callers share a pull only
  // when they hold the same credentials (or none), so none rides on another's secret and none is
  // failed by another's lack of one.
  const bool theirs = credentials_are_for(given, *ref);
  if (!theirs) spdlog::debug("pull {}: the credentials given are for another registry; pulled without them", key);
  RegistryCredentials creds = theirs ? given : RegistryCredentials{};
  if (creds.empty() && impl_->opt.node_credentials) {
    auto node = impl_->opt.node_credentials->lookup(*ref);
    if (!node.ok())
      return Status(node.status().code(), "pull " + key + ": node credentials: " + node.status().message());
    creds = std::move(*node);
  }
  // Callers for another runtime handler record another claim: their pull is theirs (it finds the
  // blobs in the store).
  const std::string job_key =
      key + "\n" + credentials_key(creds) + "\n" + (runtime_handler ? "h:" + *runtime_handler : std::string("-"));
  std::promise<Result<ImageRecord>> mine;
  std::shared_ptr<PullJob> job;
  bool owner = false;
  {
    MutexLock lock(impl_->mu);
    auto it = impl_->pulls.find(job_key);
    if (it != impl_->pulls.end()) {
      job = it->second;
    } else {
      job = std::make_shared<PullJob>();
      job->done = mine.get_future().share();
      if (impl_->opt.pull_timeout.count() > 0)
        job->deadline = std::chrono::steady_clock::now() + impl_->opt.pull_timeout;
      impl_->pulls.emplace(job_key, job);
      owner = true;
    }
    ++job->waiting;
  }
  // This caller leaves the job once its client is gone (counted once).
  bool left = false;
  auto leave_if_cancelled = [&] {
    if (!left && cancelled && cancelled()) {
      left = true;
      --job->waiting;
    }
    return left;
  };
  const Status gone(Code::cancelled, "pull " + key + ": the client cancelled");
  if (!owner) {
    while (job->done.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready)
      if (leave_if_cancelled()) return gone;
    --job->waiting;
    auto r = job->done.get();
    if (r.ok() && pin) {
      MutexLock lock(impl_->mu);
      if (Status s = impl_->pin_locked(r->id); !s.ok()) return s;
      r->pinned = true;
    }
    return r;
  }
  auto started = std::chrono::steady_clock::now();
  Result<ImageRecord> r = internal_error("pull " + key + ": not done");
  {
    PromiseKeeper<Result<ImageRecord>> keeper(mine);
    r = impl_->pull_and_record(*ref, creds, pin, runtime_handler, [&]() -> Status {
      leave_if_cancelled();
      Status s = job->should_stop();
      if (s.code() == Code::deadline_exceeded)
        return Status(Code::deadline_exceeded, "pull " + key + ": gave up after " +
                                                   std::to_string(impl_->opt.pull_timeout.count()) +
                                                   "s (image_pull_timeout_seconds)");
      return s.ok() ? s : Status(s.code(), "pull " + key + ": " + s.message());
    });
    keeper.set(r);
  }
  {
    MutexLock lock(impl_->mu);
    if (auto it = impl_->pulls.find(job_key); it != impl_->pulls.end() && it->second == job) impl_->pulls.erase(it);
  }
  if (!left) --job->waiting;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (r.ok())
    spdlog::info("pulled {} as {} ({} bytes) in {:.2f}s", key, r->id, r->size, secs);
  else
    spdlog::warn("pull {} failed after {:.2f}s: {}", key, secs, r.status().message());
  if (left) return gone;
  return r;
}

}  // namespace berth
