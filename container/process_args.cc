// Command, args and environment of a container's process (Kubernetes' documented rules).
#include "berth/container_process.h"

namespace berth {

Result<std::vector<std::string>> resolve_process_args(const ImageProcessDefaults& image,
                                                      const std::vector<std::string>& command,
                                                      const std::vector<std::string>& args) {
  std::vector<std::string> out;
  if (!command.empty()) {
    out = command;
    out.insert(out.end(), args.begin(), args.end());
  } else if (!args.empty()) {
    out = image.entrypoint;
    out.insert(out.end(), args.begin(), args.end());
  } else {
    out = image.entrypoint;
    out.insert(out.end(), image.cmd.begin(), image.cmd.end());
  }
  if (out.empty()) return invalid_argument("config.command: no command given and the image has no Entrypoint or Cmd");
  if (out[0].empty()) return invalid_argument("config.command: the executable name is empty");
  return out;
}

Result<std::vector<std::string>> merge_process_env(const std::vector<std::string>& image_env,
                                                   const std::vector<std::pair<std::string, std::string>>& config_env) {
  std::vector<std::string> out = image_env;
  auto key_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  for (const auto& [key, value] : config_env) {
    if (key.empty()) return invalid_argument("config.envs: an entry has an empty key");
    if (key.find('=') != std::string::npos) return invalid_argument("config.envs: key '" + key + "' contains '='");
    std::string kv = key + "=" + value;
    bool replaced = false;
    for (auto& existing : out) {
      if (key_of(existing) == key) {
        existing = kv;
        replaced = true;
      }
    }
    if (!replaced) out.push_back(std::move(kv));
  }
  return out;
}

}  // namespace berth
