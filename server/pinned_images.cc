// See pinned_images.h.
#include "pinned_images.h"

#include "berth/image_reference.h"

namespace berth {

Result<std::string> normalized_pin(const std::string& entry) {
  if (entry.rfind("sha256:", 0) == 0 && entry.size() == 7 + 64 &&
      entry.find_first_not_of("0123456789abcdef", 7) == std::string::npos)
    return entry;
  auto ref = parse_image_reference(entry);
  if (!ref.ok()) return ref.status();
  return ref->string();
}

void PinnedImages::set(const std::vector<std::string>& entries) {
  std::set<std::string> out;
  for (const auto& e : entries)
    if (auto n = normalized_pin(e); n.ok()) out.insert(*n);
  MutexLock lock(mu_);
  normalized_ = std::move(out);
}

std::optional<std::string> PinnedImages::pinning(const ImageRecord& image) const {
  MutexLock lock(mu_);
  if (normalized_.count(image.id)) return image.id;
  for (const auto* names : {&image.repo_tags, &image.repo_digests})
    for (const auto& n : *names)
      if (normalized_.count(n)) return n;
  return std::nullopt;
}

}  // namespace berth
