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
    if (now - it->second >= opt.keep_for_retry) {
      it = failed_pull_digests.erase(it);
      continue;
    }
    uint64_t bytes = 0;
    for (const std::string& path : {blobs->path(it->first), blobs->partial_path(it->first)}) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0) bytes += static_cast<uint64_t>(st.st_size);
    }
    candidates.push_back({it->first, bytes, it->second});
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

void ImageManager::Impl::empty_trash(const std::vector<std::string>& paths) const {
  for (const auto& p : paths)
    if (Status s = remove_tree(p); !s.ok()) spdlog::warn("images: emptying the trash: {}", s.message());
}

}  // namespace berth
