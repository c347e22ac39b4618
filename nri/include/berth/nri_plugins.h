// The runtime side of NRI (containerd/nri v0.12.2): the plugins berthd talks to, and the events of
// its pods and containers sent to them. Plugins either connect to the NRI socket on their own or
// are started by berthd from the plugin directory (a program named NN-name, given one end of a
// socket pair as fd 3 and only NRI_PLUGIN_NAME, NRI_PLUGIN_IDX and NRI_PLUGIN_SOCKET in its
// environment, its configuration read from the config directory). A plugin registers, is
// configured, is told what pods and containers exist, and from then on gets the events it
// subscribed to, in index order. A plugin that times out, breaks the protocol or goes away is
// disconnected and the event goes on without it; an error a plugin returns fails the operation.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "berth/nri_adjustment.h"
#include "berth/status.h"

namespace berth::nri {

struct NriOptions {
  std::string socket_path;  // where plugins connect; "" accepts none
  std::string plugin_dir;   // NN-name programs started at start(); "" starts none
  std::string plugin_config_dir;
  std::chrono::milliseconds registration_timeout{5000};
  std::chrono::milliseconds request_timeout{2000};
  std::string runtime_name = "berth", runtime_version;
  // Names of plugins without which no container is created (CreateContainer fails while one is
  // not registered), as containerd's default validator's required_plugins.
  std::vector<std::string> required_plugins;
  // The pods and containers that exist, for a plugin that just registered.
  std::function<void(std::vector<api::PodSandbox>&, std::vector<api::Container>&)> snapshot;
  // A plugin's own update of running containers (UpdateContainers, or the updates an event's
  // answer carries for other containers): the ones that failed.
  std::function<std::vector<api::ContainerUpdate>(const std::vector<api::ContainerUpdate>&)> update;
  // A plugin asks that a container be evicted: berth stops it (as kubelet would be asked to).
  std::function<void(const api::ContainerEviction&, const std::string& plugin)> evict;
};

struct PluginInfo {
  std::string name, index;
  int32_t events = 0;
  bool launched = false;  // started by berthd from the plugin directory
};

struct CreateAdjustment {
  api::ContainerAdjustment adjust;
  std::vector<api::ContainerUpdate> updates;  // of other containers
  std::map<std::string, std::string> owners;  // field -> plugin that set it
};

class NriPlugins {
 public:
  // Listens on the socket and starts the plugin directory's programs (a program that fails to
  // start or register is logged and left out; a malformed name in the directory is an error).
  static Result<std::unique_ptr<NriPlugins>> start(NriOptions options);
  ~NriPlugins();  // disconnects every plugin and kills the ones it started
  NriPlugins(const NriPlugins&) = delete;
  NriPlugins& operator=(const NriPlugins&) = delete;

  std::vector<PluginInfo> plugins() const;
  // Whether any plugin is subscribed to the event: callers skip building its pod and container.
  bool wants(api::Event event) const;
  bool requires_plugins() const { return !required_plugins_.empty(); }

  Status run_pod_sandbox(const api::PodSandbox& pod);
  Status stop_pod_sandbox(const api::PodSandbox& pod);
  Status remove_pod_sandbox(const api::PodSandbox& pod);
  Status update_pod_sandbox(const api::PodSandbox& pod, const api::LinuxResources& overhead,
                            const api::LinuxResources& resources);
  Status post_update_pod_sandbox(const api::PodSandbox& pod);
  Result<CreateAdjustment> create_container(const api::PodSandbox& pod, const api::Container& container);
  Status post_create_container(const api::PodSandbox& pod, const api::Container& container);
  Status start_container(const api::PodSandbox& pod, const api::Container& container);
  Status post_start_container(const api::PodSandbox& pod, const api::Container& container);
  // The resources to apply: the request's with what plugins changed of them; and updates of others.
  Result<std::vector<api::ContainerUpdate>> update_container(const api::PodSandbox& pod,
                                                             const api::Container& container,
                                                             api::LinuxResources& resources);
  Status post_update_container(const api::PodSandbox& pod, const api::Container& container);
  Result<std::vector<api::ContainerUpdate>> stop_container(const api::PodSandbox& pod, const api::Container& container);
  Status remove_container(const api::PodSandbox& pod, const api::Container& container);

  struct Impl;

 private:
  explicit NriPlugins(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> required_plugins_;  // options.required_plugins, read without a lock
};

// Event numbers as the API has them (api::Event), as a subscription mask's bits.
constexpr int32_t event_bit(api::Event e) { return 1 << (static_cast<int>(e) - 1); }

}  // namespace berth::nri
