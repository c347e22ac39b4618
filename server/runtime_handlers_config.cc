// The handler table from the configuration and the start-up host probe (see runtime_handlers_config.h).
#include "runtime_handlers_config.h"

#include <spdlog/spdlog.h>

#include "berth/prepared_mounts.h"
#include "berth/user_namespace.h"

namespace berth {

HostProbe probe_host(const std::string& root_dir) {
  HostProbe probe;
  // Once at start: pods with user namespaces of their own need id-mapped overlay layers. Tried on
  // the filesystem the layers live on (image_root, else root), not on the state dir's: /run is a tmpfs on nodes,
  // which kernels before 6.3 cannot id-map, while the layers' ext4 or xfs can.
  probe.user_namespaces = probe_idmapped_overlay(root_dir + "/userns-probe");
  if (probe.user_namespaces.ok())
    spdlog::info("berthd: pods may have user namespaces of their own");
  else
    spdlog::warn("berthd: pods cannot have user namespaces of their own: {}", probe.user_namespaces.message());
  probe.features = {.mount_setattr = kernel_has_mount_setattr(), .idmapped_overlay = probe.user_namespaces.ok()};
  return probe;
}

RuntimeHandlers runtime_handlers_from_config(const Config& config, const HostFeatures& host) {
  std::vector<RuntimeHandler> handlers;
  for (const auto& [name, h] : config.runtimes)
    handlers.push_back({name, h.path, h.root.empty() ? config.state + "/runtime/" + name : h.root, h.host_processes,
                        std::chrono::seconds(h.timeout_seconds)});
  return RuntimeHandlers(std::move(handlers), config.default_runtime, config.cgroup_driver == "systemd", host);
}

void log_runtime_handlers(const RuntimeHandlers& runtimes) {
  for (const RuntimeHandler& h : runtimes.all()) {
    HandlerFeatures f = runtimes.features(h.name);
    if (!f.runtime_found) {
      spdlog::warn("berthd: runtime handler {}: {} is not a runtime that runs here; it advertises no feature", h.name,
                   h.binary);
      continue;
    }
    spdlog::info(
        "berthd: runtime handler {} ({}): recursive read-only mounts {}, user namespaces {}, exec and pause {}", h.name,
        h.binary,
        !f.recursive_read_only_mounts ? "no"
        : f.rro_option                ? "yes (the runtime's rro)"
                                      : "yes (berthd's copy)",
        f.user_namespaces ? "yes" : "no",
        f.host_processes ? "by berth-exec and berth-pause-launch" : "through the runtime only");
  }
}

}  // namespace berth
