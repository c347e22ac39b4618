// PullWorker: the PullSteps of a pull (or of one of its layer threads) asked of a berth-pull helper
// process, so that libcurl, libarchive and their TLS and decompression libraries are mapped only
// in a child. A helper serves pulls one after another, each between begin() and end_pull()
// (PullHelperPool keeps it between them). berthd keeps all the pull's bookkeeping (the shared
// jobs, leases, the store's garbage, the index, fault points); the helper only fetches into the
// store and unpacks. A stop (the pull was cancelled or ran out of time) kills the helper at once;
// a helper that dies (a crash in a decompressor) fails the step with how it ended.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "berth/unique_fd.h"
#include "pull_steps.h"
#include "pull_worker_protocol.h"

namespace berth {

class PullWorker final : public PullSteps {
 public:
  // Starts `binary` and sends it the hello.
  static Result<std::unique_ptr<PullWorker>> start(const std::string& binary, const pull_protocol::Hello& hello);
  // A pull of `reference` from now on. `on_bytes` (may be unset) gets the registry bytes the
  // helper reports; `stop` is asked about every 200 ms while a step is under way.
  Status begin(const std::string& reference, const RegistryCredentials& creds, std::function<void(size_t)> on_bytes,
               PullStopCheck stop);
  // That pull is over: the helper forgets its credentials, and the temp files it left are
  // removed. An error: the helper is no good for another pull.
  Status end_pull();
  // Not ended (killed or gone after a failed step).
  bool alive() const { return !reaped_; }
  // Closes the connection (the helper exits) and reaps it; a helper that does not go within a
  // few seconds is killed. Temp blob files it left are removed.
  ~PullWorker() override;
  PullWorker(const PullWorker&) = delete;
  PullWorker& operator=(const PullWorker&) = delete;

  Result<FetchedManifest> get_manifest(const std::string& tag_or_digest) override;
  Status fetch_blob(const Descriptor& d, const std::string& what) override;
  void prefetch(const Descriptor& d) override;
  Status unpack(const std::string& blob_path, const std::string& dest, const std::string& what) override;

  pid_t pid() const { return pid_; }
  // Between pulls a helper says nothing: a readable or hung-up connection is one that ended.
  bool went_away() const;

 private:
  PullWorker(pid_t pid, UniqueFd sock, std::string store);
  // Sends a request and reads its reply (and, when `body` is set, the frame after it).
  Result<pull_protocol::Reply> call(const pull_protocol::Request& request, std::string* body);
  Result<std::string> next_frame();
  // Kills and reaps the helper; returns how it ended ("killed by signal 11").
  std::string end(bool kill_it);

  pid_t pid_;
  UniqueFd sock_;
  std::string store_;
  std::function<void(size_t)> on_bytes_;
  PullStopCheck stop_;
  std::string buffer_;  // bytes read past the last whole frame
  bool reaped_ = false;
};

}  // namespace berth
