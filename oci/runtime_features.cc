// `<runtime> features`, cached by the binary's identity (see runtime_features.h).
#include "berth/runtime_features.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include <nlohmann/json.hpp>

#include "berth/command.h"
#include "berth/json_fields.h"

namespace berth {

bool RuntimeFeatures::has_mount_option(const std::string& option) const {
  return std::find(mount_options.begin(), mount_options.end(), option) != mount_options.end();
}

RuntimeFeatures parse_runtime_features(const std::string& json_text) {
  RuntimeFeatures f;
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (!j.is_object()) return f;
  JsonFields fields(j);
  auto options = fields.strings("mountOptions");
  if (!fields.ok()) return f;
  f.answered = true;
  f.mount_options = std::move(options);
  return f;
}

RuntimeFeatures runtime_features(const std::string& configured) {
  // The config may name the runtime ("runc"): it is looked up in PATH, as the runtime probe does.
  auto found = configured.find('/') == std::string::npos ? find_executable(configured) : std::optional<std::string>(configured);
  if (!found) return {};
  const std::string& binary = *found;
  using Identity = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;
  static std::mutex mu;
  static std::map<std::string, std::pair<Identity, RuntimeFeatures>> cache;
  struct stat st {};
  if (::stat(binary.c_str(), &st) != 0) return {};
  Identity id{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(binary); it != cache.end() && it->second.first == id) return it->second.second;
  }
  RuntimeFeatures f;
  auto r = run_command({.argv = {binary, "features"}, .timeout = std::chrono::seconds(5), .output_limit = 1 << 20});
  if (r.ok() && r->success()) f = parse_runtime_features(r->out);
  std::lock_guard lock(mu);
  cache[binary] = {id, f};
  return f;
}

}  // namespace berth
