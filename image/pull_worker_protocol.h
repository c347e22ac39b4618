// The pipe protocol between berthd (PullWorker) and a berth-pull helper. Every message is a frame:
// a 4-byte little-endian length, then that many bytes. berthd sends a hello (the store and the
// registry settings) and then one request at a time; the helper answers each with a reply frame,
// and a manifest reply with one more frame holding the body. A helper serves pulls one after
// another: each begins with a `begin` request naming its reference and credentials (over the pipe,
// never in argv or the environment) and ends with `end`, which drops them. Requests and replies
// are JSON objects.
// berthd reads the helper's frames as outside bytes: a helper that a hostile archive took over
// gets no more than a clear error out of berthd (fuzz_pull_worker_reply).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "berth/registry_settings.h"
#include "berth/status.h"

namespace berth::pull_protocol {

// A manifest is at most 8 MiB (RegistryClient); a frame has room for it and its envelope.
constexpr size_t kMaxFrameBytes = 9u << 20;
// A prefetched blob is held in the fetcher's memory until asked for.
constexpr int64_t kMaxPrefetchBytes = 1 << 20;

std::string frame(std::string_view payload);
// Takes the first whole frame off `buffer`; nullopt while it is incomplete. A frame longer than
// kMaxFrameBytes is an error.
Result<std::optional<std::string>> take_frame(std::string& buffer);

struct Hello {
  std::string store;         // the blob store's directory
  RegistryOptions registry;  // on_bytes is not sent
};
std::string encode_hello(const Hello& hello);
Result<Hello> decode_hello(const std::string& payload);

struct Request {
  // prefetch: a hint that `digest` (small: kMaxPrefetchBytes) is asked for soon; the fetcher
  // starts it beside the next requests, and the blob request for it is answered from memory.
  enum class Op { begin, manifest, blob, prefetch, unpack, end } op = Op::manifest;
  std::string reference;            // begin: the image reference being pulled
  RegistryCredentials credentials;  // begin
  std::string ref;                  // manifest: tag or digest
  std::string digest;
  int64_t size = -1;            // blob
  uint64_t offset = 0;          // blob: from this byte on (a download continued)
  std::string blob_path, dest;  // unpack
  std::string what;             // names the object in errors
};
std::string encode_request(const Request& request);
Result<Request> decode_request(const std::string& payload);

struct Reply {
  Status status;
  uint64_t registry_bytes = 0;  // body bytes received from registries for this request
  std::string media_type;       // manifest (its digest berthd computes itself)
};
std::string encode_reply(const Reply& reply);
// The helper's answer; an unreadable one is an internal error naming the helper.
Result<Reply> decode_reply(const std::string& payload);

}  // namespace berth::pull_protocol
