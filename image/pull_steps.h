// PullSteps: the parts of a pull that read outside bytes with libcurl and libarchive (a registry's
// manifests and blobs, a layer's archive). berthd asks them of a berth-pull helper process
// (PullWorker), so it never maps those libraries and a hostile archive cannot take it down; the
// helper itself, and tests that drive ImageManager without one, run them in process.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "berth/image_reference.h"
#include "berth/registry_settings.h"
#include "berth/status.h"
#include "blob_store.h"
#include "manifest.h"
#include "registry_client.h"

namespace berth {

class PullSteps {
 public:
  virtual ~PullSteps() = default;
  // A tag or digest of the pull's repository; a digest is verified against the body.
  virtual Result<FetchedManifest> get_manifest(const std::string& tag_or_digest) = 0;
  // Fetches blob `d` into the store, verified (digest and size); a transfer cut midway is
  // restarted once. `what` names it in errors.
  virtual Status fetch_blob(const Descriptor& d, const std::string& what) = 0;
  // A hint that blob `d` (of at most pull_protocol::kMaxPrefetchBytes) is fetched later in this
  // pull: a helper starts its download beside the requests in between, so a small blob (the
  // config) does not wait its turn behind the layers. Nothing to do in process.
  virtual void prefetch(const Descriptor& d) { (void)d; }
  // Unpacks a stored layer blob into `dest` (exists, empty).
  virtual Status unpack(const std::string& blob_path, const std::string& dest, const std::string& what) = 0;
};

using PullStopCheck = std::function<Status()>;

// Blobs this large are written resumably (BlobStore::begin): a pull that fails, or whose caller
// gives up, leaves what it had for the next one to continue with an HTTP range request.
constexpr int64_t kResumableBlobBytes = 1 << 20;

// Fetches blob `d` into `blobs` through `transfer`, which streams the blob from the writer's
// written() on into it; a transfer cut midway continues once from where it stopped. Shared by the
// in-process steps and a berth-pull helper's.
Status fetch_blob_resuming(BlobStore& blobs, const Descriptor& d, const std::string& what,
                           const std::function<Status(BlobStore::Writer&)>& transfer);

// The steps run in this process. `blobs` must outlive them; `stop` is asked during transfers.
std::unique_ptr<PullSteps> in_process_pull_steps(const RegistryOptions& registry, const ImageReference& ref,
                                                 const RegistryCredentials& creds, BlobStore& blobs,
                                                 PullStopCheck stop);

}  // namespace berth
