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

struct RuntimeHandlers::Table {
  Mutex mu;
  std::vector<RuntimeHandler> handlers BERTH_GUARDED_BY(mu);
  std::vector<RuntimeHandler> removed BERTH_GUARDED_BY(mu);  // by reloads; still run what they made
  std::string default_name BERTH_GUARDED_BY(mu);

  std::string resolve(const std::string& handler) BERTH_REQUIRES(mu) {
    return handler.empty() ? default_name : handler;
  }
  const RuntimeHandler* configured(const std::string& name) BERTH_REQUIRES(mu) {
    for (const auto& h : handlers)
      if (h.name == name) return &h;
    return nullptr;
  }
  std::string known() BERTH_REQUIRES(mu) {
    std::string out;
    for (const auto& k : handlers) out += (out.empty() ? "" : ", ") + k.name;
    return out;
  }
};

RuntimeHandlers::RuntimeHandlers() : table_(std::make_shared<Table>()), cache_(std::make_shared<FeatureCache>()) {}

RuntimeHandlers::RuntimeHandlers(std::vector<RuntimeHandler> handlers, std::string default_name, bool systemd_cgroup,
                                 HostFeatures host)
    : systemd_cgroup_(systemd_cgroup),
      host_(host),
      table_(std::make_shared<Table>()),
      cache_(std::make_shared<FeatureCache>()) {
  MutexLock lock(table_->mu);
  table_->handlers = std::move(handlers);
  table_->default_name = std::move(default_name);
}

std::string RuntimeHandlers::resolve(const std::string& handler) const {
  MutexLock lock(table_->mu);
  return table_->resolve(handler);
}

std::string RuntimeHandlers::default_name() const {
  MutexLock lock(table_->mu);
  return table_->default_name;
}

std::vector<RuntimeHandler> RuntimeHandlers::all() const {
  MutexLock lock(table_->mu);
  return table_->handlers;
}

std::optional<RuntimeHandler> RuntimeHandlers::find(const std::string& handler) const {
  MutexLock lock(table_->mu);
  std::string name = table_->resolve(handler);
  if (const RuntimeHandler* h = table_->configured(name)) return *h;
  for (const auto& h : table_->removed)
    if (h.name == name) return h;
  return std::nullopt;
}

Status RuntimeHandlers::accepts_new(const std::string& handler) const {
  MutexLock lock(table_->mu);
  std::string name = table_->resolve(handler);
  if (table_->configured(name)) return ok_status();
  return invalid_argument("runtime_handler: unknown handler '" + name + "' (known: " + table_->known() + ")");
}

Result<OciRuntime> RuntimeHandlers::runtime_for(const std::string& handler) const {
  auto h = find(handler);
  if (!h) {
    MutexLock lock(table_->mu);
    return invalid_argument("runtime_handler: unknown handler '" + table_->resolve(handler) +
                            "' (known: " + table_->known() + ")");
  }
  return OciRuntime(h->binary, h->root, systemd_cgroup_, h->timeout);
}

void RuntimeHandlers::replace(std::vector<RuntimeHandler> handlers, std::string default_name) {
  MutexLock lock(table_->mu);
  for (auto& old : table_->handlers) {
    bool kept = false;
    for (const auto& h : handlers) kept = kept || h.name == old.name;
    if (!kept) {
      std::erase_if(table_->removed, [&](const RuntimeHandler& r) { return r.name == old.name; });
      table_->removed.push_back(std::move(old));
    }
  }
  for (const auto& h : handlers)
    std::erase_if(table_->removed, [&](const RuntimeHandler& r) { return r.name == h.name; });
  table_->handlers = std::move(handlers);
  table_->default_name = std::move(default_name);
}

HandlerFeatures RuntimeHandlers::features(const std::string& handler) const {
  HandlerFeatures out;
  out.rro_copy = host_.mount_setattr;
  auto h = find(handler);
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
  if (out.runtime_found) out.runtime = runtime.identity;
  return out;
}

}  // namespace berth
