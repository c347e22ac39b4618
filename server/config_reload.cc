// ConfigReloader (see config_reload.h): compare, apply the live keys, log the rest.
#include "config_reload.h"

#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "daemon_options.h"
#include "runtime_handlers_config.h"
#include "sd_notify.h"

#include "berth/mutex.h"

namespace berth {
namespace {

// The keys a reload applies; every other key needs a restart.
const std::set<std::string> kLiveKeys{"log_level",
                                      "registries",
                                      "cni_conf_dir",
                                      "cni_plugin_dirs",
                                      "streaming_token_ttl_seconds",
                                      "streaming_idle_timeout_seconds",
                                      "metrics_address",
                                      "runtimes",
                                      "default_runtime",
                                      "cdi_spec_dirs",
                                      "default_ulimits",
                                      "device_ownership_from_security_context",
                                      "pinned_images"};
// Not configuration values: where they came from.
const std::set<std::string> kProvenance{"source", "files"};

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

const std::set<std::string>& live_config_keys() { return kLiveKeys; }

std::vector<ConfigChange> config_changes(const Config& running, const Config& next) {
  std::vector<ConfigChange> out;
  nlohmann::json a = config_to_json(running), b = config_to_json(next);
  for (const auto& [key, value] : b.items()) {
    if (kProvenance.count(key) || (a.contains(key) && a[key] == value)) continue;
    out.push_back({key, kLiveKeys.count(key) > 0});
  }
  return out;
}

ConfigReloader::ConfigReloader(Config running, std::function<Result<Config>()> load, ReloadTargets targets)
    : running_(std::move(running)), load_(std::move(load)), targets_(std::move(targets)) {}

Config ConfigReloader::running() const {
  MutexLock lock(mu_);
  return running_;
}

Status ConfigReloader::reload() {
  (void)notify_service_manager(reloading_state());
  struct Ready {
    ~Ready() { (void)notify_service_manager("READY=1"); }
  } ready;
  auto loaded = load_();
  if (!loaded.ok()) {
    spdlog::error("config: reload refused, keeping the running configuration: {}", loaded.status().message());
    return loaded.status();
  }
  const Config& next = *loaded;
  MutexLock lock(mu_);
  Config effective = running_;
  effective.source = next.source;
  effective.files = next.files;
  effective.origins = next.origins;
  std::vector<std::string> applied;
  bool handlers_changed = false;
  for (const ConfigChange& change : config_changes(running_, next)) {
    const std::string& key = change.key;
    if (!change.live) {
      spdlog::warn("config: key {} changed; it takes effect at the next restart (set in {})", key,
                   config_key_origin(next, key));
      continue;
    }
    if (key == "log_level") {
      spdlog::set_level(spdlog::level::from_str(next.log_level));
      effective.log_level = next.log_level;
    } else if (key == "registries") {
      if (targets_.images) targets_.images->set_registry_hosts(next.registries);
      effective.registries = next.registries;
    } else if (key == "cni_conf_dir" || key == "cni_plugin_dirs") {
      if (key == "cni_conf_dir" || running_.cni_conf_dir == next.cni_conf_dir) {  // one call for both keys
        if (targets_.cni) targets_.cni->set_dirs(next.cni_conf_dir, next.cni_plugin_dirs);
      }
      effective.cni_conf_dir = next.cni_conf_dir;
      effective.cni_plugin_dirs = next.cni_plugin_dirs;
    } else if (key == "streaming_token_ttl_seconds" || key == "streaming_idle_timeout_seconds") {
      if (targets_.streaming)
        targets_.streaming->set_timeouts(std::chrono::seconds(next.streaming_token_ttl_seconds),
                                         std::chrono::seconds(next.streaming_idle_timeout_seconds));
      effective.streaming_token_ttl_seconds = next.streaming_token_ttl_seconds;
      effective.streaming_idle_timeout_seconds = next.streaming_idle_timeout_seconds;
    } else if (key == "runtimes" || key == "default_runtime") {
      handlers_changed = true;  // one new table for both keys, below
    } else if (key == "cdi_spec_dirs") {
      if (targets_.cdi) targets_.cdi->set_dirs(next.cdi_spec_dirs);
      effective.cdi_spec_dirs = next.cdi_spec_dirs;
    } else if (key == "default_ulimits" || key == "device_ownership_from_security_context") {
      if (targets_.containers) targets_.containers->set_process_defaults(container_process_defaults(next));
      effective.default_ulimits = next.default_ulimits;
      effective.device_ownership_from_security_context = next.device_ownership_from_security_context;
    } else if (key == "pinned_images") {
      if (targets_.pinned_images) targets_.pinned_images->set(next.pinned_images);
      effective.pinned_images = next.pinned_images;
    } else if (key == "metrics_address") {
      Status s = targets_.metrics_address ? targets_.metrics_address(next.metrics_address) : ok_status();
      if (!s.ok()) {
        spdlog::error("config {}: key 'metrics_address': {}; still serving \"{}\"", config_key_origin(next, key),
                      s.message(), running_.metrics_address);
        continue;
      }
      effective.metrics_address = next.metrics_address;
    }
    applied.push_back(key);
  }
  if (handlers_changed) {
    // A handler's containers live under its root: a new root would lose them, so it waits for a
    // restart (which recovers them from the old one before it is changed).
    std::map<std::string, RuntimeHandlerConfig> handlers = next.runtimes;
    for (auto& [name, h] : handlers) {
      auto was = running_.runtimes.find(name);
      if (was == running_.runtimes.end() || was->second.root == h.root) continue;
      spdlog::warn("config: key runtimes.{}.root changed; it takes effect at the next restart (set in {})", name,
                   config_key_origin(next, "runtimes." + name + ".root"));
      h.root = was->second.root;
    }
    Config table_config = next;
    table_config.runtimes = handlers;
    table_config.state = running_.state;  // roots default under the running state dir
    if (targets_.runtimes) {
      RuntimeHandlers table = runtime_handlers_from_config(table_config, targets_.runtimes->host());
      targets_.runtimes->replace(table.all(), table.default_name());
      log_runtime_handlers(*targets_.runtimes);
      if (targets_.runtime_probe) targets_.runtime_probe->set_path(targets_.runtimes->find("")->binary);
    }
    for (const auto& [name, h] : running_.runtimes)
      if (!handlers.count(name))
        spdlog::info(
            "config: runtime handler {} removed: its pods and containers run on and can be stopped and "
            "removed; new pods cannot ask for it",
            name);
    effective.runtimes = std::move(handlers);
    effective.default_runtime = next.default_runtime;
  }
  running_ = std::move(effective);
  spdlog::info("config: reloaded from {}: {}", next.files.empty() ? "the embedded defaults" : joined(next.files),
               applied.empty() ? "nothing to apply" : "applied " + joined(applied));
  return ok_status();
}

Status move_metrics_endpoint(std::unique_ptr<MetricsEndpoint>& endpoint, const std::string& address,
                             const MetricsRegistry& registry) {
  std::string old = endpoint ? endpoint->address() : "";
  endpoint.reset();  // its port may be the one asked for now
  if (address.empty()) {
    if (!old.empty()) spdlog::info("berthd: stopped serving Prometheus metrics on http://{}/metrics", old);
    return ok_status();
  }
  auto next = MetricsEndpoint::start(address, registry);
  if (next.ok()) {
    endpoint = std::move(*next);
    spdlog::info("berthd: serving Prometheus metrics on http://{}/metrics", endpoint->address());
    return ok_status();
  }
  if (!old.empty()) {
    auto back = MetricsEndpoint::start(old, registry);
    if (back.ok())
      endpoint = std::move(*back);
    else
      spdlog::error("berthd: metrics endpoint {} could not be restarted: {}", old, back.status().message());
  }
  return next.status();
}

}  // namespace berth
