// config.dump parsing; see checkpoint_config.h.
#include "berth/checkpoint_config.h"

#include <nlohmann/json.hpp>

namespace berth {

Result<CheckpointConfig> parse_checkpoint_config(const std::string& text) {
  if (text.size() > (1 << 20)) return invalid_argument("config.dump: larger than 1 MiB");
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return invalid_argument("config.dump: not a JSON object");
  CheckpointConfig c;
  struct Field {
    const char* key;
    std::string* out;
  } fields[] = {{"id", &c.id},
                {"name", &c.name},
                {"rootfsImage", &c.rootfs_image},
                {"rootfsImageRef", &c.rootfs_image_ref},
                {"rootfsImageName", &c.rootfs_image_name},
                {"runtime", &c.runtime}};
  for (const auto& f : fields) {
    auto it = j.find(f.key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) return invalid_argument(std::string("config.dump: ") + f.key + " is not a string");
    *f.out = it->get<std::string>();
    if (f.out->size() > 4096)
      return invalid_argument(std::string("config.dump: ") + f.key + " is longer than 4096 bytes");
  }
  return c;
}

}  // namespace berth
