// The two processes of a berth-pull helper and what passes between them. The fetcher, a child of
// the helper, talks to the registry (TLS, HTTP, its JSON answers) as an unprivileged user with no
// capability, no new privileges and a read-only view of the file system: it writes nothing, it
// hands the bytes it receives over a socketpair. The helper itself (the unpacker) keeps the
// capabilities unpacking needs but has no network: it writes what the fetcher sends into the store
// through the verifying writer, so a blob is stored, and later unpacked, only once its digest and
// size are checked by the process that holds them. The fetcher's messages are pull protocol frames
// whose first byte says what they hold: 'R' a reply, 'B' a manifest body, 'D' blob data, 'Z' the
// blob's data starts over from byte 0 (a registry that ignored the range a continued download
// asked for).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "berth/registry_settings.h"
#include "blob_store.h"
#include "pull_steps.h"

namespace berth::pull_fetch {

// The fetcher's side: answers the requests read from `fd` until it closes; the exit code. It
// serves the helper's pulls one after another, each between a begin (its reference and
// credentials) and an end, and keeps its connections to registries open from one to the next.
int serve_fetcher(int fd, const RegistryOptions& registry);

// A fetcher that could not confine itself: every request gets `why`; the exit code.
int refuse_requests(int fd, const Status& why);

// The helper's side: the pull steps whose registry I/O the fetcher does.
class FetchedPullSteps : public PullSteps {
 public:
  // A pull of `reference` with `creds` from now on; its first manifest or blob request follows.
  virtual Status begin(const std::string& reference, const RegistryCredentials& creds) = 0;
  // The pull is over: the fetcher forgets its credentials and tokens.
  virtual Status end() = 0;
};

// Those steps over `fd`. Bytes received from registries are added to `received`.
std::unique_ptr<FetchedPullSteps> fetched_pull_steps(int fd, BlobStore& blobs, std::atomic<uint64_t>& received);

}  // namespace berth::pull_fetch
