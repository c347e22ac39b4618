// The runtime handler table: a short list searched by name (a node configures a handful), and the
// runtimes' answers cached against their binaries' identity (see runtime_handlers.h).
#include "berth/mutex.h"
#include "berth/runtime_handlers.h"

#include <map>
#include <mutex>

#include "berth/command.h"
#include "berth/file_identity.h"
#include "berth/runtime_features.h"

namespace berth {

struct RuntimeHandlers::FeatureCache {
  // Which file answered: another path, or the same path after an upgrade, is asked again.
  struct BinaryKey {
    std::string path;
    FileIdentity file;
    bool operator==(const BinaryKey&) const = default;
  };

  static std::optional<BinaryKey> key_of(const std::string& configured) {
    auto path = find_executable(configured);
    if (!path) return std::nullopt;
    auto file = file_identity(*path);
    if (!file) return std::nullopt;
    return BinaryKey{*path, *file};
  }

  Mutex mu;
  std::map<std::string, std::pair<BinaryKey, RuntimeFeatures>> by_handler BERTH_GUARDED_BY(mu);
};

RuntimeHandlers::RuntimeHandlers() : cache_(std::make_shared<FeatureCache>()) {}

RuntimeHandlers::RuntimeHandlers(std::vector<RuntimeHandler> handlers, std::string default_name, bool systemd_cgroup,
                                 HostFeatures host)
    : handlers_(std::move(handlers)),
      default_name_(std::move(default_name)),
      systemd_cgroup_(systemd_cgroup),
      host_(host),
      cache_(std::make_shared<FeatureCache>()) {}

const RuntimeHandler* RuntimeHandlers::find(const std::string& handler) const {
  std::string name = resolve(handler);
  for (const auto& h : handlers_)
    if (h.name == name) return &h;
  return nullptr;
}

Result<OciRuntime> RuntimeHandlers::runtime_for(const std::string& handler) const {
  const RuntimeHandler* h = find(handler);
  if (!h) {
    std::string known;
    for (const auto& k : handlers_) known += (known.empty() ? "" : ", ") + k.name;
    return invalid_argument("runtime_handler: unknown handler '" + resolve(handler) + "' (known: " + known + ")");
  }
  return OciRuntime(h->binary, h->root, systemd_cgroup_, h->timeout);
}

HandlerFeatures RuntimeHandlers::features(const std::string& handler) const {
  HandlerFeatures out;
  out.rro_copy = host_.mount_setattr;
  const RuntimeHandler* h = find(handler);
  if (!h) return out;
  auto key = FeatureCache::key_of(h->binary);
  if (!key) return out;
  RuntimeFeatures runtime;
  bool cached = false;
  {
    MutexLock lock(cache_->mu);
    if (auto it = cache_->by_handler.find(h->name); it != cache_->by_handler.end() && it->second.first == *key) {
      runtime = it->second.second;
      cached = true;
    }
  }
  if (!cached) {
    // Asked without the lock, so a slow runtime holds up no other handler's callers (callers that
    // meet the same new binary at once may each ask it).
    runtime = ask_runtime_features(key->path);
    MutexLock lock(cache_->mu);
    cache_->by_handler[h->name] = {*key, runtime};
  }
  out.runtime_found = runtime.responds;
  out.rro_option = runtime.has_mount_option("rro");
  out.recursive_read_only_mounts = out.runtime_found && out.rro_copy;
  out.user_namespaces = out.runtime_found && runtime.joins_user_namespace() && host_.idmapped_overlay;
  out.host_processes = out.runtime_found && h->host_processes.value_or(!runtime.identity.empty());
  return out;
}

}  // namespace berth
