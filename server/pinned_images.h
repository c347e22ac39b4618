// berth.toml's pinned_images: references whose images kubelet's image GC must spare. An image is
// pinned while one of its tags or digests (or its id) is listed, so an entry a reload removes
// unpins it; nothing is written to the image's record for it (the sandbox image's own pin is).
// ImageStatus and ListImages report such images pinned; RemoveImage refuses them, naming the entry.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "berth/image_manager.h"
#include "berth/mutex.h"
#include "berth/status.h"

namespace berth {

class PinnedImages {
 public:
  // Entries are normalized ("busybox" pins docker.io/library/busybox:latest); config checks that
  // each is a reference or an image id.
  explicit PinnedImages(const std::vector<std::string>& entries) { set(entries); }
  void set(const std::vector<std::string>& entries);
  // The entry that pins `image`, if any.
  std::optional<std::string> pinning(const ImageRecord& image) const;

 private:
  mutable Mutex mu_;
  std::set<std::string> normalized_ BERTH_GUARDED_BY(mu_);
};

// An entry of pinned_images as it is matched: a normalized reference, or an image id as given.
Result<std::string> normalized_pin(const std::string& entry);

}  // namespace berth
