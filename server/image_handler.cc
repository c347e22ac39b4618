// Queries with no handler (crictl, a kubelet without RuntimeClassInImageCriAPI) see every image,
// since every handler runs on one store and this machine's platform; a named one sees what was
// pulled for it.
#include "image_handler.h"

namespace berth {

Result<std::optional<std::string>> image_handler_key(const RuntimeHandlers& runtimes, const std::string& given,
                                                     const std::string& field, bool for_new_work) {
  if (given.empty()) return std::optional<std::string>();
  bool known = for_new_work ? runtimes.accepts_new(given).ok() : runtimes.find(given).has_value();
  if (!known) {
    std::string names;
    for (const auto& h : runtimes.all()) names += (names.empty() ? "" : ", ") + h.name;
    return invalid_argument(field + ": unknown runtime handler '" + given + "' (known: " + names + ")");
  }
  std::string name = runtimes.resolve(given);
  return std::optional<std::string>(name == runtimes.default_name() ? "" : name);
}

}  // namespace berth
