// Garbage collection of the image store: what no image record, container or sandbox hold, or
// in-flight pull uses. Deciding happens under the store's lock; deleting does not: the garbage is
// renamed into <images>/trash (one rename each, so a pull or status call never waits behind the
// deletion of a large layer), and removed from there by empty_trash, or at the next start.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <spdlog/spdlog.h>

#include "berth/file_tree.h"
#include "image_store_state.h"

namespace berth {

namespace fs = std::filesystem;

std::vector<std::string> ImageManager::Impl::collect_garbage_locked() {
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
  const std::set<std::string> kept = kept_for_retry_locked();
  live.insert(kept.begin(), kept.end());
  std::vector<std::string> trashed;
  auto to_trash = [&](const std::string& path, const std::string& what) {
    std::string dest = trash_dir() + "/" + std::to_string(trash_serial++);
    if (::rename(path.c_str(), dest.c_str()) == 0)
      trashed.push_back(dest);
    else if (errno != ENOENT)
      spdlog::warn("images: cannot move {} {} to the trash: {}", what, path, std::strerror(errno));
  };
  // Manifests of live images are kept too: they are small and name their config and layers. Only
  // blobs that look like one are read: a layer read "to see" once cost berthd 12 MiB of RSS that
  // the rpc thread's malloc arena kept (RemoveImage of a 100 MiB image).
  for (const auto& digest : blobs->list()) {
    if (live.count(digest)) continue;
    auto body = blobs->looks_like_document(digest, 4 << 20)
                    ? blobs->read(digest, 4 << 20)
                    : Result<std::string>(Status(Code::not_found, "not a document"));
    if (body.ok()) {
      auto m = parse_manifest(*body, "", digest);
      if (m.ok() &&
          (live.count(m->config.digest) || std::any_of(m->manifests.begin(), m->manifests.end(),
                                                       [&](const Descriptor& d) { return live.count(d.digest) > 0; })))
        continue;
    }
    to_trash(blobs->path(digest), "blob");
  }
  for (const auto& p : blobs->partials())
    if (!live.count(p.digest)) to_trash(blobs->partial_path(p.digest), "partial download");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(opt.dir + "/snapshots", ec)) {
    std::string name = e.path().filename();
    if (name.find('.') != std::string::npos) continue;  // in progress
    if (!live.count("sha256:" + name)) to_trash(e.path(), "snapshot");
  }
  return trashed;
}

std::set<std::string> ImageManager::Impl::kept_for_retry_locked() {
  struct Candidate {
    std::string digest;
    uint64_t bytes;
    std::chrono::steady_clock::time_point failed;
  };
  std::vector<Candidate> candidates;
  const auto now = std::chrono::steady_clock::now();
  for (auto it = failed_pull_digests.begin(); it != failed_pull_digests.end();) {
    if (now - it->second.failed >= opt.keep_for_retry) {
      it = failed_pull_digests.erase(it);
      continue;
    }
    uint64_t bytes = it->second.snapshot_bytes;
    for (const std::string& path : {blobs->path(it->first), blobs->partial_path(it->first)}) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0) bytes += static_cast<uint64_t>(st.st_size);
    }
    candidates.push_back({it->first, bytes, it->second.failed});
    ++it;
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.failed > b.failed; });
  std::set<std::string> kept;
  uint64_t total = 0;
  for (const auto& c : candidates) {
    if (total + c.bytes > opt.keep_for_retry_bytes) {
      failed_pull_digests.erase(c.digest);
      continue;
    }
    total += c.bytes;
    kept.insert(c.digest);
  }
  return kept;
}

bool ImageManager::Impl::holds_for_retry_locked() const { return !failed_pull_digests.empty(); }

void ImageManager::Impl::keep_for_retry(const std::vector<std::string>& digests) {
  std::vector<std::pair<std::string, uint64_t>> measured;
  for (const auto& d : digests) {
    auto u = measure_disk_usage(snapshot_dir(d));  // NOT_FOUND for a blob that is no layer
    measured.emplace_back(d, u.ok() ? u->bytes : 0);
  }
  const auto now = std::chrono::steady_clock::now();
  MutexLock lock(mu);
  for (const auto& [d, bytes] : measured) failed_pull_digests[d] = {now, bytes};
  wake_retry_expiry_locked();
}

void ImageManager::Impl::wake_retry_expiry_locked() {
  if (failed_pull_digests.empty() || stopping) return;
  if (!retry_expiry.joinable()) {
    try {
      retry_expiry = std::thread([this] { run_retry_expiry(); });
    } catch (const std::system_error& e) {
      // The next removal or pull collects what expired instead.
      spdlog::warn("images: cannot start the thread that expires what failed pulls kept: {}", e.what());
    }
    return;
  }
  retry_expiry_cv.notify_all();
}

void ImageManager::Impl::run_retry_expiry() {
  MutexLock lock(mu);
  while (!stopping) {
    if (failed_pull_digests.empty()) {
      retry_expiry_cv.wait(lock.native());
      continue;
    }
    auto oldest = std::min_element(failed_pull_digests.begin(), failed_pull_digests.end(),
                                   [](const auto& a, const auto& b) { return a.second.failed < b.second.failed; });
    const auto due = oldest->second.failed + opt.keep_for_retry;
    if (std::chrono::steady_clock::now() < due) {
      retry_expiry_cv.wait_until(lock.native(), due);
      continue;
    }
    std::vector<std::string> trash = collect_garbage_locked();  // forgets what expired
    lock.unlock();
    empty_trash(trash);
    lock.lock();
  }
}

ImageManager::Impl::~Impl() {
  {
    MutexLock lock(mu);
    stopping = true;
  }
  retry_expiry_cv.notify_all();
  if (retry_expiry.joinable()) retry_expiry.join();
}

void ImageManager::Impl::empty_trash(const std::vector<std::string>& paths) const {
  for (const auto& p : paths)
    if (Status s = remove_tree(p); !s.ok()) spdlog::warn("images: emptying the trash: {}", s.message());
}

}  // namespace berth
