// ConfigReloader: what SIGHUP does in a running berthd. It loads the configuration again exactly as
// a start would (files, drop-ins, flags) and applies what can change without touching running
// pods: log_level, registries (mirrors, insecure, CA files), cni_conf_dir, cni_plugin_dirs, the
// streaming timeouts, metrics_address, the runtime handlers and default_runtime (a handler removed
// keeps stopping and removing what it made, and takes no new pod), cdi_spec_dirs, default_ulimits
// and device_ownership_from_security_context (for containers created after), pinned_images. Any other key that
// changed, and a handler's root, is logged as taking effect at the next restart and keeps its
// running value. An invalid file changes nothing: the error (file and key) is logged and the
// running configuration stays. Nothing is persisted.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "berth/cdi.h"
#include "berth/cni_manager.h"
#include "berth/container_manager.h"
#include "berth/config.h"
#include "berth/image_manager.h"
#include "berth/metrics_endpoint.h"
#include "berth/mutex.h"
#include "berth/runtime_handlers.h"
#include "berth/runtime_probe.h"
#include "berth/streaming_server.h"
#include "pinned_images.h"

namespace berth {

struct ConfigChange {
  std::string key;  // a top-level key ("registries" for any registry table)
  bool live;        // applied by a reload; false: takes effect at the next restart
};

// The keys whose values differ between two configurations, in config_to_json's order.
std::vector<ConfigChange> config_changes(const Config& running, const Config& next);

// The top-level keys a reload applies; every other one needs a restart.
const std::set<std::string>& live_config_keys();

struct ReloadTargets {
  ImageManager* images = nullptr;
  CniManager* cni = nullptr;
  StreamingServer* streaming = nullptr;
  RuntimeHandlers* runtimes = nullptr;  // every copy of it sees the new table
  RuntimeProbe* runtime_probe = nullptr;
  CdiRegistry* cdi = nullptr;
  ContainerManager* containers = nullptr;
  PinnedImages* pinned_images = nullptr;
  // Moves the metrics endpoint to an address ("" stops it); on an error the old one keeps serving.
  std::function<Status(const std::string&)> metrics_address;
};

class ConfigReloader {
 public:
  // `load` reads the configuration as berthd's start did.
  ConfigReloader(Config running, std::function<Result<Config>()> load, ReloadTargets targets);

  // One SIGHUP: the error when the new configuration was refused (nothing changed), else OK.
  // Tells systemd RELOADING=1 before and READY=1 after.
  Status reload();

  // The configuration in effect: the last one loaded, but the start's values for keys that need a
  // restart (and for a metrics address that could not be bound).
  Config running() const;

 private:
  mutable Mutex mu_;  // also serializes reloads
  Config running_ BERTH_GUARDED_BY(mu_);
  std::function<Result<Config>()> load_;
  ReloadTargets targets_;
};

// Stops `endpoint` and serves `address` instead ("" : none); when that fails, the old address is
// served again and the error returned.
Status move_metrics_endpoint(std::unique_ptr<MetricsEndpoint>& endpoint, const std::string& address,
                             const MetricsRegistry& registry);

}  // namespace berth
