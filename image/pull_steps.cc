// The in-process PullSteps: RegistryClient, BlobStore's verifying writer and unpack_layer.
#include "pull_steps.h"

#include <spdlog/spdlog.h>

#include "layer_unpack.h"

namespace berth {

namespace {

// The pull's requests reuse each other's connections; none when curl cannot share them.
std::shared_ptr<RegistryConnections> own_connections() {
  auto c = RegistryConnections::make();
  return c.ok() ? *c : nullptr;
}

class InProcessPullSteps final : public PullSteps {
 public:
  InProcessPullSteps(const RegistryOptions& registry, const ImageReference& ref, const RegistryCredentials& creds,
                     BlobStore& blobs, PullStopCheck stop)
      : client_(registry, ref, creds, std::move(stop), own_connections()), blobs_(blobs) {}

  Result<FetchedManifest> get_manifest(const std::string& tag_or_digest) override {
    return client_.get_manifest(tag_or_digest);
  }

  Status fetch_blob(const Descriptor& d, const std::string& what) override {
    return fetch_blob_resuming(blobs_, d, what, [&](BlobStore::Writer& w) {
      return client_.get_blob(
          d.digest, [&](const char* data, size_t n) { return w.write(data, n); }, w.written(),
          [&] { return w.restart(); });
    });
  }

  Status unpack(const std::string& blob_path, const std::string& dest, const std::string& what) override {
    return unpack_layer(blob_path, dest, what);
  }

 private:
  RegistryClient client_;
  BlobStore& blobs_;
};

}  // namespace

Status fetch_blob_resuming(BlobStore& blobs, const Descriptor& d, const std::string& what,
                           const std::function<Status(BlobStore::Writer&)>& transfer) {
  auto w = blobs.begin(d.digest, d.size, d.size >= kResumableBlobBytes);
  if (!w.ok()) return w.status().context(what);
  if ((*w)->resumed_from() > 0)
    spdlog::info("{}: continuing a download cut short at {} of {} bytes", what, (*w)->resumed_from(), d.size);
  Status last;
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status s = transfer(**w);
    if (s.ok()) s = (*w)->commit();
    if (s.ok()) return s;
    last = s;
    if (s.code() != Code::unavailable) break;  // a stop (cancelled, deadline) or a bad blob: no retry
  }
  return last.context(what);
}

std::unique_ptr<PullSteps> in_process_pull_steps(const RegistryOptions& registry, const ImageReference& ref,
                                                 const RegistryCredentials& creds, BlobStore& blobs,
                                                 PullStopCheck stop) {
  return std::make_unique<InProcessPullSteps>(registry, ref, creds, blobs, std::move(stop));
}

}  // namespace berth
