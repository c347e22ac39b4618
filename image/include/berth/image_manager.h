// ImageManager: berth's image service. Pulls images from OCI registries into a content store,
// unpacks each layer once into a snapshot shared by every image and container using it, and keeps
// the image records (persisted under <root>/images, reloaded at start).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/disk_usage_cache.h"
#include "berth/node_credentials.h"
#include "berth/signature_policy.h"
#include "berth/status.h"
#include "berth/registry_settings.h"

namespace berth {

struct ImageManagerOptions {
  std::string dir;             // <root>/images
  std::string containers_dir;  // writable layers, reported by fs_usage
  RegistryOptions registry;
  // The berth-pull helper that fetches and unpacks for each pull (berthd sets it, so it never maps
  // libcurl or libarchive itself); empty: those steps run in this process.
  std::string pull_helper;
  // How long a helper waits for the next pull from the same registry once its pull is over (it
  // keeps its connections); zero: it exits with its pull.
  std::chrono::milliseconds pull_helper_idle{std::chrono::seconds(60)};
  int max_parallel_layer_fetches = 3;       // node-wide, and threads per pull at most
  int max_layers = 128;                     // images with more are refused before any fetch
  std::chrono::seconds pull_timeout{1800};  // a pull is given up after this long; 0: never
  // What a failed or abandoned pull fetched (whole blobs, unpacked layers, partial downloads) is
  // kept this long and up to this many bytes (the newest first), for the retry to continue from;
  // garbage collection takes it after that. 0 seconds: nothing is kept.
  std::chrono::seconds keep_for_retry{3600};
  uint64_t keep_for_retry_bytes = 2ull << 30;
  std::chrono::seconds progress_log_interval{10};  // a running pull logs how far it has come; 0: never
  // Where image_store_usage and container_layers_usage read their figures (open() starts both
  // trees' first walks on its refresh thread); null: walked per call.
  DiskUsageCache* usage_cache = nullptr;
  // The node's own credentials (registry_auth_file and its helpers), for pulls that bring none for
  // the image's registry; null: none.
  NodeCredentials* node_credentials = nullptr;
  // Which images a pull may record (signatures checked before anything of the image is stored);
  // null: every image.
  std::shared_ptr<const SignaturePolicy> signature_policy;
};

// The parts of the image config containers need.
struct ImageConfigSummary {
  std::vector<std::string> entrypoint, cmd, env;
  std::string working_dir, user, stop_signal;
  std::map<std::string, std::string> labels;
};

struct ImageRecord {
  std::string id;  // the config digest
  std::vector<std::string> repo_tags;
  std::vector<std::string> repo_digests;
  uint64_t size = 0;                // config + compressed layers
  std::vector<std::string> layers;  // layer digests, lowest first
  ImageConfigSummary config;
  std::string config_json;  // the image config as pulled
  bool pinned = false;
  // The runtime handlers (ImageSpec.runtime_handler) it was pulled for, "" the default one; empty
  // when berth pulled it for itself (the sandbox image): then it serves every handler. Every
  // handler shares one store and this machine's platform, so this says who asked, not what is kept.
  std::vector<std::string> runtime_handlers;
  // Which rule of the signature policy let it in when it was last pulled ("signedBy <key file>
  // (scope ...)", "insecureAcceptAnything (scope ...)"); empty: pulled with no policy.
  std::string accepted_by;
  bool serves(const std::string& handler) const {
    return runtime_handlers.empty() ||
           std::find(runtime_handlers.begin(), runtime_handlers.end(), handler) != runtime_handlers.end();
  }
};

// A pull running now: its reference, the bytes of its blobs already in the store (or streamed into
// their partial downloads so far) and the bytes of all of them, and how long it has run.
struct PullProgress {
  std::string reference;
  uint64_t done_bytes = 0, total_bytes = 0;
  double seconds = 0;
};

struct StoreUsage {
  std::string mountpoint;
  uint64_t bytes = 0, inodes = 0;
  int64_t timestamp_ns = 0;
};

class ImageManager;

// A hold on an image's layers taken together with the look-up (ImageManager::acquire): released
// when the handle goes, unless keep() hands it to a durable owner (a container or sandbox record),
// which later releases it by id.
class ImageHold {
 public:
  ImageHold(ImageManager* images, ImageRecord record) : images_(images), record_(std::move(record)) {}
  ImageHold(ImageHold&& o) noexcept : images_(std::exchange(o.images_, nullptr)), record_(std::move(o.record_)) {}
  ImageHold& operator=(ImageHold&&) = delete;
  ImageHold(const ImageHold&) = delete;
  ~ImageHold();

  const ImageRecord& record() const { return record_; }
  // The hold outlives the handle; its new owner releases it with ImageManager::release(id).
  ImageRecord keep() && {
    images_ = nullptr;
    return std::move(record_);
  }

 private:
  ImageManager* images_;
  ImageRecord record_;
};

class ImageManager {
 public:
  static Result<std::unique_ptr<ImageManager>> open(ImageManagerOptions options);
  ~ImageManager();

  // Pulls (or finds complete in the store) and records the image; concurrent pulls of one
  // reference for one runtime handler share the work. `pin` marks it pinned (the sandbox image).
  // `cancelled` (when set) tells whether this caller's client went away: the caller returns
  // CANCELLED at once, and the shared work stops once no caller waits for it any more.
  // `runtime_handler` ("" the default) is recorded as one the image was pulled for; without one,
  // an image recorded now serves every handler.
  Result<ImageRecord> pull(const std::string& reference, const RegistryCredentials& creds, bool pin = false,
                           const std::function<bool()>& cancelled = {},
                           const std::optional<std::string>& runtime_handler = std::nullopt);

  // By id ("sha256:…" or its hex), a unique id prefix, a tag or digest reference.
  std::optional<ImageRecord> find(const std::string& reference) const;
  std::vector<ImageRecord> list() const;

  // Marks the image (by exact id) pinned and persists that; not_found when there is no such image.
  Status pin(const std::string& id);

  // Removes the image the reference names with all its tags (the CRI's rule since 1.36). With a
  // handler, only that handler's claim goes while others have pulled it too, and an image never
  // pulled for that handler is left alone. What no image and no held image still uses is deleted.
  // An unknown reference is OK (CRI's rule).
  Status remove(const std::string& reference, const std::optional<std::string>& handler = std::nullopt);

  // Snapshot directories of the image's layers, lowest first, for an overlayfs lowerdir.
  std::vector<std::string> snapshot_dirs(const ImageRecord& image) const;
  // The annotations of the manifest (or index) the image was pulled by, and of an index's
  // entries: how a checkpoint image says what it is. Empty when none or when it does not read.
  std::map<std::string, std::string> manifest_annotations(const ImageRecord& image) const;

  // Finds the image (as find) and holds its layers in one step under the store's lock, so no
  // RemoveImage can free them between the two. not_found names the reference.
  Result<ImageHold> acquire(const std::string& reference);

  // A container holds the image's layers while it exists, whatever happens to the image record,
  // also across restarts: a held image that is removed keeps a hidden record until its last
  // holder releases it.
  void hold(const std::string& image_id);
  void release(const std::string& image_id);
  // Called once every container and sandbox recovered at start has taken its holds again: removed
  // images none of them holds are deleted now. Until then, those loaded at open are kept.
  Status finish_recovery();

  // Replaces the per-registry settings (mirrors, insecure, CA files) for pulls that start from now
  // on (berthd's config reload); pulls already running finish with the settings they began with.
  void set_registry_hosts(std::map<std::string, RegistryHostSettings> hosts);

  // Ends the berth-pull helpers kept idle between pulls (berthd near its memory limit); returns
  // how many.
  size_t end_idle_pull_helpers();

  // The pulls running now (one per reference, however many callers wait for it).
  std::vector<PullProgress> pulls_in_progress() const;

  Result<StoreUsage> image_store_usage() const;
  Result<StoreUsage> container_layers_usage() const;

  struct Impl;

 private:
  explicit ImageManager(std::unique_ptr<Impl> impl);
  Status remove_locked(const std::string& reference, const std::optional<std::string>& handler,
                       std::vector<std::string>* trash);
  Status finish_recovery_locked(std::vector<std::string>* trash);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth
