// Pull orchestration, removal and garbage collection. Locking: `mu` guards the index, the
// in-flight maps, the hold counts and the pull leases; it is never held across network work
// (garbage collection does delete files under it).
#include "berth/image_manager.h"

#include <sys/stat.h>
#include <time.h>

#include <filesystem>
#include <future>
#include <mutex>
#include <semaphore>
#include <set>
#include <spdlog/spdlog.h>
#include <thread>

#include "berth/file_tree.h"
#include "berth/image_reference.h"
#include "blob_store.h"
#include "image_index.h"
#include "berth/atomic_file.h"
#include "berth/fault_point.h"
#include "berth/private_dir.h"
#include "layer_unpack.h"
#include "manifest.h"
#include "pull_libraries.h"
#include "registry_client.h"

namespace berth {

namespace fs = std::filesystem;

struct ImageManager::Impl {
  ImageManagerOptions opt;
  std::unique_ptr<BlobStore> blobs;
  mutable std::mutex mu;
  ImageIndex index;
  std::map<std::string, std::shared_future<Result<ImageRecord>>> pulls;  // by reference
  std::map<std::string, std::shared_future<Status>> layer_work;           // by layer digest
  std::map<std::string, int> holds;                                       // by image id
  std::map<std::string, std::vector<std::string>> held_layers;            // by image id
  std::map<std::string, int> leased;  // digest -> in-flight pulls that fetched, unpacked or reuse it
  // Removed records loaded at open whose holders may not have been recovered yet: kept until
  // finish_recovery even when their hold count drops to zero meanwhile.
  std::set<std::string> unrecovered;
  std::counting_semaphore<64> fetch_slots;

  explicit Impl(ImageManagerOptions o)
      : opt(std::move(o)), index(opt.dir + "/index.json"), fetch_slots(std::clamp(opt.max_parallel_layer_fetches, 1, 64)) {}

  std::string snapshot_dir(const std::string& digest) const { return opt.dir + "/snapshots/" + digest.substr(7); }

  class PullLease;
  Result<ImageRecord> pull_and_record(const ImageReference& ref, const RegistryCredentials& creds, bool pin);
  Result<ImageRecord> do_pull(const ImageReference& ref, const RegistryCredentials& creds, bool pin, PullLease& lease);
  Status fetch_blob(RegistryClient& client, const Descriptor& d, const std::string& what);
  Status ensure_layer(RegistryClient& client, const Descriptor& d, const std::string& what);
  Status ensure_layer_once(RegistryClient& client, const Descriptor& d, const std::string& what);
  void collect_garbage();  // call with mu held
  Status pin_locked(const std::string& id);
};

// The blobs and snapshots one pull uses stay live for collect_garbage until the pull has recorded
// its image or failed. A digest is leased *before* the pull looks for it in the store, so a
// collection (a RemoveImage, a container's release) either ran before the look, which then finds
// it missing and fetches it, or runs after and spares it.
class ImageManager::Impl::PullLease {
 public:
  explicit PullLease(Impl& impl) : impl_(impl) {}
  ~PullLease() {
    std::lock_guard lock(impl_.mu);
    end_locked();
  }
  PullLease(const PullLease&) = delete;
  PullLease& operator=(const PullLease&) = delete;

  void keep(const std::string& digest) {
    std::lock_guard lock(impl_.mu);
    if (std::find(digests_.begin(), digests_.end(), digest) != digests_.end()) return;
    digests_.push_back(digest);
    ++impl_.leased[digest];
  }
  // With mu held: once the image is in the index (or the pull gave up), it no longer needs this.
  void end_locked() {
    for (const auto& d : digests_)
      if (auto it = impl_.leased.find(d); it != impl_.leased.end() && --it->second == 0) impl_.leased.erase(it);
    digests_.clear();
  }

 private:
  Impl& impl_;
  std::vector<std::string> digests_;  // guarded by impl_.mu
};

Status ImageManager::Impl::fetch_blob(RegistryClient& client, const Descriptor& d, const std::string& what) {
  if (blobs->has(d.digest)) return ok_status();
  Status last;
  for (int attempt = 0; attempt < 2; ++attempt) {  // a transfer cut midway restarts from scratch once
    auto w = blobs->begin(d.digest, d.size);
    if (!w.ok()) return w.status();
    Status s = client.get_blob(d.digest, [&](const char* data, size_t n) { return (*w)->write(data, n); });
    if (s.ok()) s = (*w)->commit();
    if (s.ok()) fault_point(FaultPoint::pull_image_blob_stored);
    if (s.ok()) return s;
    last = s;
    if (s.code() != Code::unavailable && s.code() != Code::deadline_exceeded) break;
  }
  return last.context(what);
}

Status ImageManager::Impl::ensure_layer(RegistryClient& client, const Descriptor& d, const std::string& what) {
  std::string snap = snapshot_dir(d.digest);
  struct stat st {};
  if (::stat(snap.c_str(), &st) == 0) return ok_status();
  fetch_slots.acquire();
  Status s = fetch_blob(client, d, what);
  fetch_slots.release();
  if (!s.ok()) return s;
  std::string temp = snap + ".unpacking";
  if (Status r = remove_tree(temp); !r.ok()) return r.context(what);
  if (::mkdir(temp.c_str(), 0755) != 0) return errno_status(errno, what + ": mkdir " + temp);
  fault_point(FaultPoint::pull_image_layer_unpacking);
  s = unpack_layer(blobs->path(d.digest), temp, what);
  if (s.ok() && ::rename(temp.c_str(), snap.c_str()) != 0) s = errno_status(errno, what + ": rename snapshot");
  if (s.ok()) fault_point(FaultPoint::pull_image_layer_unpacked);
  if (!s.ok())
    if (Status r = remove_tree(temp); !r.ok()) spdlog::warn("images: {}: {}", what, r.message());
  return s;
}

// One fetch+unpack per layer digest at a time, shared by every pull that needs it.
Status ImageManager::Impl::ensure_layer_once(RegistryClient& client, const Descriptor& d, const std::string& what) {
  std::promise<Status> mine;
  std::shared_future<Status> shared;
  bool owner = false;
  {
    std::lock_guard lock(mu);
    auto it = layer_work.find(d.digest);
    if (it != layer_work.end()) {
      shared = it->second;
    } else {
      shared = mine.get_future().share();
      layer_work[d.digest] = shared;
      owner = true;
    }
  }
  if (!owner) return shared.get();
  Status s = ensure_layer(client, d, what);
  mine.set_value(s);
  std::lock_guard lock(mu);
  layer_work.erase(d.digest);
  return s;
}

// A failed pull takes back what it stored that nothing else uses: manifests, config, layer blobs
// and the snapshots of the layers that did finish. Another pull's lease or an image keeps what it
// shares with them.
Result<ImageRecord> ImageManager::Impl::pull_and_record(const ImageReference& ref, const RegistryCredentials& creds, bool pin) {
  PullLease lease(*this);
  Result<ImageRecord> r = do_pull(ref, creds, pin, lease);
  if (!r.ok()) {
    std::lock_guard lock(mu);
    lease.end_locked();
    collect_garbage();
  }
  return r;
}

Result<ImageRecord> ImageManager::Impl::do_pull(const ImageReference& ref, const RegistryCredentials& creds, bool pin,
                                                PullLease& lease) {
  RegistryClient client(opt.registry, ref, creds);
  std::string what = "pull " + ref.string();
  auto top = client.get_manifest(ref.digest.empty() ? ref.tag : ref.digest);
  if (!top.ok()) return top.status().context(what);
  auto parsed = parse_manifest(top->body, top->media_type, "manifest " + top->digest);
  if (!parsed.ok()) return parsed.status().context(what);
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
  lease.keep(image_manifest.digest);
  lease.keep(top->digest);
  lease.keep(parsed->config.digest);
  for (const auto& layer : parsed->layers) lease.keep(layer.digest);
  fault_point(FaultPoint::pull_image_manifest_fetched);
  if (Status s = blobs->put(image_manifest.digest, image_manifest.body); !s.ok()) return s.context(what);
  if (top->digest != image_manifest.digest)
    if (Status s = blobs->put(top->digest, top->body); !s.ok()) return s.context(what);

  if (Status s = fetch_blob(client, parsed->config, "config " + parsed->config.digest); !s.ok()) return s.context(what);
  auto config = blobs->read(parsed->config.digest, 16 << 20);
  if (!config.ok()) return config.status().context(what);
  // Checked before any layer is fetched: an image whose config does not read is refused whole.
  auto summary = summarise_image_config(*config);
  if (!summary.ok()) return summary.status().context("config " + parsed->config.digest).context(what);

  std::vector<std::future<Status>> work;
  for (const auto& layer : parsed->layers)
    work.push_back(std::async(std::launch::async, [&, layer] { return ensure_layer_once(client, layer, "layer " + layer.digest); }));
  Status first_error;
  for (auto& w : work) {
    Status s = w.get();
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  if (!first_error.ok()) return first_error.context(what);

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
  std::lock_guard lock(mu);
  index.upsert(r);
  lease.end_locked();  // the record keeps it all live from here
  if (Status s = index.save(); !s.ok()) return s.context(what);
  fault_point(FaultPoint::pull_image_recorded);
  return *index.find(r.id);
}

void ImageManager::Impl::collect_garbage() {
  std::set<std::string> live;
  for (const auto& r : index.all()) {
    live.insert(r.id);
    live.insert(r.layers.begin(), r.layers.end());
    for (const auto& d : r.repo_digests) live.insert(d.substr(d.find('@') + 1));
  }
  for (const auto& [id, layers] : held_layers) {
    live.insert(id);
    live.insert(layers.begin(), layers.end());
  }
  for (const auto& [digest, n] : leased) live.insert(digest);  // layer_work's digests are leased too
  // Manifests of live images are kept too: they are small and name their config and layers.
  for (const auto& digest : blobs->list()) {
    if (live.count(digest)) continue;
    auto body = blobs->read(digest, 4 << 20);
    if (body.ok()) {
      auto m = parse_manifest(*body, "", digest);
      if (m.ok() && (live.count(m->config.digest) ||
                     std::any_of(m->manifests.begin(), m->manifests.end(), [&](const Descriptor& d) { return live.count(d.digest) > 0; })))
        continue;
    }
    (void)blobs->remove(digest);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(opt.dir + "/snapshots", ec)) {
    std::string name = e.path().filename();
    if (name.find('.') != std::string::npos) continue;  // in progress
    if (live.count("sha256:" + name)) continue;
    if (Status r = remove_tree(e.path()); !r.ok()) spdlog::warn("images: removing snapshot {}: {}", name, r.message());
  }
}

ImageManager::ImageManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ImageManager::~ImageManager() = default;

Result<std::unique_ptr<ImageManager>> ImageManager::open(ImageManagerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  std::error_code ec;
  for (const auto& d : {impl->opt.dir, impl->opt.dir + "/snapshots"})
    if (Status s = make_private_dir(d); !s.ok()) return s.context("open image store");
  if (!impl->opt.containers_dir.empty()) fs::create_directories(impl->opt.containers_dir, ec);
  // Unpacks a crash interrupted.
  for (const auto& e : fs::directory_iterator(impl->opt.dir + "/snapshots", ec))
    if (e.path().filename().string().find(".unpacking") != std::string::npos) {
      if (Status r = remove_tree(e.path()); !r.ok()) spdlog::warn("images: {}", r.message());
      else spdlog::info("images: removed {}, a layer unpack cut short", e.path().string());
    }
  auto blobs = BlobStore::open(impl->opt.dir);
  if (!blobs.ok()) return blobs.status();
  impl->blobs = std::move(*blobs);
  for (const auto& t : remove_atomic_write_leftovers(impl->opt.dir))
    spdlog::info("images: removed {}, an index write cut short", t);
  if (Status s = impl->index.load(); !s.ok()) return s;
  impl->unrecovered = impl->index.removed();
  return std::unique_ptr<ImageManager>(new ImageManager(std::move(impl)));
}

Result<ImageRecord> ImageManager::pull(const std::string& reference, const RegistryCredentials& creds, bool pin) {
  auto ref = parse_image_reference(reference);
  if (!ref.ok()) return ref.status();
  // libcurl and libarchive are loaded (and curl's TLS set up) at the first pull, not at start: a
  // node that never pulls, or not yet, does not pay their memory (pull_libraries.cc).
  auto libs = pull_libraries();
  if (!libs.ok()) return libs.status();
  std::string key = ref->string();
  std::promise<Result<ImageRecord>> mine;
  std::shared_future<Result<ImageRecord>> shared;
  bool owner = false;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->pulls.find(key);
    if (it != impl_->pulls.end()) {
      shared = it->second;
    } else {
      shared = mine.get_future().share();
      impl_->pulls.emplace(key, shared);
      owner = true;
    }
  }
  if (!owner) {
    auto r = shared.get();
    if (r.ok() && pin) {
      std::lock_guard lock(impl_->mu);
      if (Status s = impl_->pin_locked(r->id); !s.ok()) return s;
      r->pinned = true;
    }
    return r;
  }
  auto started = std::chrono::steady_clock::now();
  Result<ImageRecord> r = impl_->pull_and_record(*ref, creds, pin);
  mine.set_value(r);
  {
    std::lock_guard lock(impl_->mu);
    impl_->pulls.erase(key);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (r.ok()) spdlog::info("pulled {} as {} ({} bytes) in {:.2f}s", key, r->id, r->size, secs);
  else spdlog::warn("pull {} failed after {:.2f}s: {}", key, secs, r.status().message());
  return r;
}

std::optional<ImageRecord> ImageManager::find(const std::string& reference) const {
  std::lock_guard lock(impl_->mu);
  const ImageRecord* r = impl_->index.find(reference);
  return r ? std::optional<ImageRecord>(*r) : std::nullopt;
}

std::vector<ImageRecord> ImageManager::list() const {
  std::lock_guard lock(impl_->mu);
  return impl_->index.images();
}

Status ImageManager::Impl::pin_locked(const std::string& id) {
  ImageRecord* r = index.mutable_find_id(id);
  if (!r) return not_found("pin image " + id + ": no such image");
  if (r->pinned) return ok_status();
  r->pinned = true;
  Status s = index.save();
  if (!s.ok()) r->pinned = false;  // what is on disk stays what we report
  return s.context("pin image " + id);
}

Status ImageManager::pin(const std::string& id) {
  std::lock_guard lock(impl_->mu);
  return impl_->pin_locked(id);
}

Status ImageManager::remove(const std::string& reference) {
  std::lock_guard lock(impl_->mu);
  const ImageRecord* found = impl_->index.find(reference);
  if (!found) return ok_status();
  ImageRecord* r = impl_->index.mutable_find_id(found->id);
  auto ref = parse_image_reference(reference);
  bool by_tag = ref.ok() && ref->digest.empty() &&
                std::find(r->repo_tags.begin(), r->repo_tags.end(), ref->string()) != r->repo_tags.end();
  if (by_tag && r->repo_tags.size() > 1) {
    std::erase(r->repo_tags, ref->string());
  } else {
    if (impl_->holds.count(r->id)) impl_->index.mark_removed(r->id);
    else impl_->index.erase(r->id);
    impl_->collect_garbage();
  }
  return impl_->index.save().context("remove image " + reference);
}

std::vector<std::string> ImageManager::snapshot_dirs(const ImageRecord& image) const {
  std::vector<std::string> out;
  for (const auto& l : image.layers) out.push_back(impl_->snapshot_dir(l));
  return out;
}

void ImageManager::hold(const std::string& image_id) {
  std::lock_guard lock(impl_->mu);
  if (impl_->holds[image_id]++ == 0)
    if (const ImageRecord* r = impl_->index.find_any_id(image_id)) impl_->held_layers[image_id] = r->layers;
}

void ImageManager::release(const std::string& image_id) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->holds.find(image_id);
  if (it == impl_->holds.end() || --it->second > 0) return;
  impl_->holds.erase(it);
  impl_->held_layers.erase(image_id);
  if (impl_->index.is_removed(image_id) && !impl_->unrecovered.count(image_id)) {
    impl_->index.erase(image_id);
    // Not fatal: the record stays removed on disk, and the next start's recovery deletes it.
    if (Status s = impl_->index.save(); !s.ok()) spdlog::warn("release image {}: {}", image_id, s.message());
  }
  if (!impl_->index.find(image_id)) impl_->collect_garbage();
}

Status ImageManager::finish_recovery() {
  std::lock_guard lock(impl_->mu);
  std::set<std::string> unrecovered = std::move(impl_->unrecovered);
  impl_->unrecovered.clear();
  bool erased = false;
  for (const auto& id : unrecovered) {
    if (impl_->holds.count(id) || !impl_->index.is_removed(id)) continue;
    impl_->index.erase(id);
    erased = true;
  }
  Status s = erased ? impl_->index.save() : ok_status();
  // Always: blobs and snapshots of a pull a crash cut short belong to no image.
  impl_->collect_garbage();
  return s.context("image store recovery");
}

static Result<StoreUsage> usage_of(const std::string& dir) {
  auto u = measure_disk_usage(dir);
  if (!u.ok()) return u.status();
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return StoreUsage{dir, u->bytes, u->inodes, static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec};
}

Result<StoreUsage> ImageManager::image_store_usage() const { return usage_of(impl_->opt.dir); }
Result<StoreUsage> ImageManager::container_layers_usage() const { return usage_of(impl_->opt.containers_dir); }

}  // namespace berth
