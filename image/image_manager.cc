// The image store's life: opening it (with the clean-up of what a crash left), look-ups, pins,
// removal, the holds of containers and sandboxes, and recovery. Pulls are in image_pull.cc, garbage
// collection in image_gc.cc; the shared state and its locking in image_store_state.h.
#include "berth/image_manager.h"

#include <sys/stat.h>
#include <time.h>

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <spdlog/spdlog.h>

#include "berth/file_tree.h"
#include "berth/image_reference.h"
#include "berth/atomic_file.h"
#include "berth/fault_point.h"
#include "berth/mutex.h"
#include "berth/private_dir.h"
#include "image_store_state.h"

namespace berth {

namespace fs = std::filesystem;

ImageManager::ImageManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ImageManager::~ImageManager() = default;

void ImageManager::set_registry_hosts(std::map<std::string, RegistryHostSettings> hosts) {
  auto next = std::make_shared<RegistryOptions>(*impl_->registry());
  next->hosts = std::move(hosts);
  MutexLock lock(impl_->registry_mu);
  impl_->registry_now = std::move(next);
}

Result<std::unique_ptr<ImageManager>> ImageManager::open(ImageManagerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  std::error_code ec;
  for (const auto& d : {impl->opt.dir, impl->opt.dir + "/snapshots", impl->trash_dir()})
    if (Status s = make_private_dir(d); !s.ok()) return s.context("open image store");
  // Garbage a crash kept from being deleted.
  for (const auto& e : fs::directory_iterator(impl->trash_dir(), ec))
    if (Status s = remove_tree(e.path()); !s.ok()) spdlog::warn("images: emptying the trash: {}", s.message());
  if (!impl->opt.containers_dir.empty()) fs::create_directories(impl->opt.containers_dir, ec);
  // Unpacks a crash interrupted.
  for (const auto& e : fs::directory_iterator(impl->opt.dir + "/snapshots", ec))
    if (e.path().filename().string().find(".unpacking") != std::string::npos) {
      if (Status r = remove_tree(e.path()); !r.ok())
        spdlog::warn("images: {}", r.message());
      else
        spdlog::info("images: removed {}, a layer unpack cut short", e.path().string());
    }
  auto blobs = BlobStore::open(impl->opt.dir);
  if (!blobs.ok()) return blobs.status();
  impl->blobs = std::move(*blobs);
  impl->progress = std::make_unique<PullProgressBoard>(*impl->blobs, impl->opt.progress_log_interval);
  for (const auto& t : remove_atomic_write_leftovers(impl->opt.dir))
    spdlog::info("images: removed {}, an index write cut short", t);
  {
    MutexLock lock(impl->mu);  // not shared yet: taken for what it guards
    if (Status s = impl->index.load(); !s.ok()) return s;
    impl->unrecovered = impl->index.removed();
    // Partial downloads from before the restart count as failed when they were last written.
    const auto steady = std::chrono::steady_clock::now();
    const int64_t wall_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const auto& p : impl->blobs->partials())
      impl->failed_pull_digests[p.digest] = {steady - std::chrono::seconds(std::max<int64_t>(0, wall_s - p.mtime_s))};
  }
  // Both trees can be large already: their first walk is the refresh thread's, not that of
  // kubelet's first ImageFsInfo.
  if (impl->opt.usage_cache) {
    impl->opt.usage_cache->prefetch(impl->opt.dir);
    if (!impl->opt.containers_dir.empty()) impl->opt.usage_cache->prefetch(impl->opt.containers_dir);
  }
  return std::unique_ptr<ImageManager>(new ImageManager(std::move(impl)));
}

std::optional<ImageRecord> ImageManager::find(const std::string& reference) const {
  MutexLock lock(impl_->mu);
  const ImageRecord* r = impl_->index.find(reference);
  return r ? std::optional<ImageRecord>(*r) : std::nullopt;
}

std::vector<ImageRecord> ImageManager::list() const {
  MutexLock lock(impl_->mu);
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
  MutexLock lock(impl_->mu);
  return impl_->pin_locked(id);
}

Status ImageManager::remove(const std::string& reference, const std::optional<std::string>& handler) {
  std::vector<std::string> trash;
  Status saved = remove_locked(reference, handler, &trash);
  impl_->empty_trash(trash);
  return saved;
}

Status ImageManager::remove_locked(const std::string& reference, const std::optional<std::string>& handler,
                                   std::vector<std::string>* trash) {
  MutexLock lock(impl_->mu);
  const ImageRecord* found = impl_->index.find(reference);
  if (!found) return ok_status();
  ImageRecord* r = impl_->index.mutable_find_id(found->id);
  if (handler && !r->runtime_handlers.empty()) {
    if (!r->serves(*handler)) return ok_status();
  }
  if (handler && r->runtime_handlers.size() > 1) {
    std::erase(r->runtime_handlers, *handler);
  } else {
    if (impl_->holds.count(r->id))
      impl_->index.mark_removed(r->id);
    else
      impl_->index.erase(r->id);
    *trash = impl_->collect_garbage_locked();
  }
  return impl_->index.save().context("remove image " + reference);
}

std::vector<std::string> ImageManager::snapshot_dirs(const ImageRecord& image) const {
  std::vector<std::string> out;
  for (const auto& l : image.layers) out.push_back(impl_->snapshot_dir(l));
  return out;
}

std::map<std::string, std::string> ImageManager::manifest_annotations(const ImageRecord& image) const {
  std::map<std::string, std::string> out;
  auto add = [&out](const nlohmann::json& j) {
    auto a = j.find("annotations");
    if (a == j.end() || !a->is_object()) return;
    for (const auto& [k, v] : a->items())
      if (v.is_string()) out.emplace(k, v.get<std::string>());
  };
  for (const std::string& ref : image.repo_digests) {
    size_t at = ref.rfind('@');
    if (at == std::string::npos) continue;
    auto body = impl_->blobs->read(ref.substr(at + 1), 4 << 20);
    if (!body.ok()) continue;
    auto j = nlohmann::json::parse(*body, nullptr, false);
    if (!j.is_object()) continue;
    add(j);
    if (auto m = j.find("manifests"); m != j.end() && m->is_array())
      for (const auto& e : *m)
        if (e.is_object()) add(e);
  }
  return out;
}

void ImageManager::hold(const std::string& image_id) {
  MutexLock lock(impl_->mu);
  impl_->hold_locked(image_id);
}

void ImageManager::Impl::hold_locked(const std::string& image_id) {
  if (holds[image_id]++ == 0)
    if (const ImageRecord* r = index.find_any_id(image_id)) held_layers[image_id] = r->layers;
}

Result<ImageHold> ImageManager::acquire(const std::string& reference) {
  MutexLock lock(impl_->mu);
  const ImageRecord* r = impl_->index.find(reference);
  if (!r) return not_found("image " + reference + " not found");
  impl_->hold_locked(r->id);
  return ImageHold(this, *r);
}

ImageHold::~ImageHold() {
  if (images_) images_->release(record_.id);
}

void ImageManager::release(const std::string& image_id) {
  std::vector<std::string> trash;
  {
    MutexLock lock(impl_->mu);
    auto it = impl_->holds.find(image_id);
    if (it == impl_->holds.end() || --it->second > 0) return;
    impl_->holds.erase(it);
    impl_->held_layers.erase(image_id);
    if (impl_->index.is_removed(image_id) && !impl_->unrecovered.count(image_id)) {
      impl_->index.erase(image_id);
      // Not fatal: the record stays removed on disk, and the next start's recovery deletes it.
      if (Status s = impl_->index.save(); !s.ok()) spdlog::warn("release image {}: {}", image_id, s.message());
    }
    if (!impl_->index.find(image_id)) trash = impl_->collect_garbage_locked();
  }
  impl_->empty_trash(trash);
}

Status ImageManager::finish_recovery() {
  std::vector<std::string> trash;
  Status s = finish_recovery_locked(&trash);
  impl_->empty_trash(trash);
  return s;
}

Status ImageManager::finish_recovery_locked(std::vector<std::string>* trash) {
  MutexLock lock(impl_->mu);
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
  *trash = impl_->collect_garbage_locked();
  impl_->wake_retry_expiry_locked();  // partial downloads from before the restart
  return s.context("image store recovery");
}

static Result<StoreUsage> usage_of(DiskUsageCache* cache, const std::string& dir) {
  if (cache) {
    auto u = cache->get(dir);
    if (!u.ok()) return u.status();
    return StoreUsage{dir, u->usage.bytes, u->usage.inodes, u->measured_at_ns};
  }
  auto u = measure_disk_usage(dir);
  if (!u.ok()) return u.status();
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return StoreUsage{dir, u->bytes, u->inodes, static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec};
}

std::vector<PullProgress> ImageManager::pulls_in_progress() const { return impl_->progress->now(); }

size_t ImageManager::end_idle_pull_helpers() { return impl_->helpers ? impl_->helpers->end_idle() : 0; }

Result<StoreUsage> ImageManager::image_store_usage() const { return usage_of(impl_->opt.usage_cache, impl_->opt.dir); }
Result<StoreUsage> ImageManager::container_layers_usage() const {
  return usage_of(impl_->opt.usage_cache, impl_->opt.containers_dir);
}

}  // namespace berth
