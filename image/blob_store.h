// BlobStore: content-addressed blobs (manifests, configs, layers) under <images>/blobs/sha256.
// A blob becomes visible only after its digest and size were verified while it streamed into a
// temp file; a failed or interrupted write leaves nothing visible behind. A resumable write (a
// large layer) streams into <images>/partial/<hex> instead, which outlives a failed transfer so
// that the next attempt, or the next pull, continues where it stopped; garbage collection bounds
// what is kept there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "berth/status.h"
#include "berth/unique_fd.h"
#include "sha256.h"

namespace berth {

class BlobStore {
 public:
  // Creates the directories; removes temp files an earlier crash left.
  static Result<std::unique_ptr<BlobStore>> open(const std::string& dir);
  // The store another process opened (a berth-pull helper writing for berthd): nothing is
  // created or cleaned. Its temp files carry `temp_tag` ("p<pid>"), so that berthd can remove
  // what a helper it killed left (remove_temp_files).
  static std::unique_ptr<BlobStore> attach(const std::string& dir, std::string temp_tag);
  void remove_temp_files(const std::string& temp_tag) const;

  std::string path(const std::string& digest) const;
  bool has(const std::string& digest) const;
  Result<std::string> read(const std::string& digest, size_t max_size) const;
  // A JSON document of at most max_size bytes (a manifest, an index, a config), told from its
  // size and first byte without reading the rest: layers are neither small nor JSON.
  bool looks_like_document(const std::string& digest, size_t max_size) const;

  class Writer {
   public:
    Writer(std::string temp, UniqueFd fd, std::string final_path, std::string digest, int64_t size);
    ~Writer();
    Writer(Writer&&) = default;
    Status write(const void* data, size_t len);
    uint64_t written() const { return written_; }
    // Bytes that were already there when the write began (a resumed partial download).
    uint64_t resumed_from() const { return resumed_from_; }
    // Starts over from byte 0 (a server that ignored the range asked for).
    Status restart();
    // Verifies digest (and size when known), fsyncs and renames into place.
    Status commit();

   private:
    friend class BlobStore;
    std::string temp_, final_, digest_;
    UniqueFd fd_;
    int64_t expected_size_;
    uint64_t written_ = 0;
    uint64_t resumed_from_ = 0;
    uint64_t written_back_ = 0;  // where the last write-behind (sync_file_range) ended
    std::unique_ptr<Sha256> hash_;
    bool done_ = false;
    // A partial download kept when the write fails, unless its bytes were found wrong.
    bool keep_on_failure_ = false;
  };

  // expected_size < 0: unknown. `resumable` (a known size): continue a partial download of the
  // digest when one is there, and keep this one if the transfer fails; a partial another writer
  // holds open is left alone, and this write is a plain one then.
  Result<std::unique_ptr<Writer>> begin(const std::string& digest, int64_t expected_size, bool resumable = false);
  // Digests with a partial download kept, with its size and age (garbage collection).
  struct Partial {
    std::string digest;
    uint64_t bytes = 0;
    int64_t mtime_s = 0;
  };
  std::vector<Partial> partials() const;
  std::string partial_path(const std::string& digest) const;
  Status put(const std::string& digest, const std::string& content);
  Status remove(const std::string& digest);
  std::vector<std::string> list() const;

 private:
  std::unique_ptr<Writer> resume_partial(const std::string& digest, int64_t expected_size) const;
  explicit BlobStore(std::string dir, std::string temp_tag = "")
      : dir_(std::move(dir)), temp_tag_(std::move(temp_tag)) {}
  std::string dir_;
  std::string temp_tag_;
};

}  // namespace berth
