// The image's User becomes uid when its user part is numeric and username otherwise, as CRI asks.
#include "image_to_cri.h"

#include <charconv>

namespace berth {

void image_to_cri(const ImageRecord& r, const PinnedImages& pinned, runtime::v1::Image* out,
                  const std::string& asked_handler) {
  out->set_id(r.id);
  for (const auto& t : r.repo_tags) out->add_repo_tags(t);
  for (const auto& d : r.repo_digests) out->add_repo_digests(d);
  out->set_size(r.size);
  out->set_pinned(r.pinned || pinned.pinning(r).has_value());
  out->mutable_spec()->set_image(r.id);
  if (!asked_handler.empty())
    out->mutable_spec()->set_runtime_handler(asked_handler);
  else if (r.runtime_handlers.size() == 1)
    out->mutable_spec()->set_runtime_handler(r.runtime_handlers[0]);
  std::string user = r.config.user.substr(0, r.config.user.find(':'));
  if (!user.empty()) {
    int64_t uid = 0;
    auto [p, ec] = std::from_chars(user.data(), user.data() + user.size(), uid);
    if (ec == std::errc() && p == user.data() + user.size())
      out->mutable_uid()->set_value(uid);
    else
      out->set_username(user);
  }
}

}  // namespace berth
