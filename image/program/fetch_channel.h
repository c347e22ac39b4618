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

#include "berth/image_reference.h"
#include "berth/registry_settings.h"
#include "blob_store.h"
#include "pull_steps.h"

namespace berth::pull_fetch {

// The fetcher's side: answers the requests read from `fd` until it closes; the exit code.
int serve_fetcher(int fd, const RegistryOptions& registry, const ImageReference& ref, const RegistryCredentials& creds);

// A fetcher that could not confine itself: every request gets `why`; the exit code.
int refuse_requests(int fd, const Status& why);

// The helper's side: the pull steps whose registry I/O the fetcher on `fd` does. Bytes received
// from registries are added to `received`.
std::unique_ptr<PullSteps> fetched_pull_steps(int fd, BlobStore& blobs, std::atomic<uint64_t>& received);

}  // namespace berth::pull_fetch
