// berthd's NRI plugins seen from its rpc handlers: each lifecycle step tells them (a no-op when
// [nri] is off), with the pod and container as NRI shows them, built from the managers' own
// records; a new container's spec gets their adjustments (ContainerManagerOptions::adjust_spec);
// their updates of running containers go to the container manager.
#pragma once

#include <memory>
#include <vector>
#include <string>

#include "berth/nri_plugins.h"
#include "berth/status.h"
#include "nri_spec.h"

namespace berth {

struct Config;
class SandboxManager;
class ContainerManager;
struct SandboxInfo;

class NriBridge {
 public:
  // Off until start(): the container manager is given adjust_spec() before it exists, and the
  // plugins are started once both managers have recovered (they are told what exists).
  Status start(const Config& config, std::string runtime_version, CdiRegistry* cdi, SandboxManager& sandboxes,
               ContainerManager& containers);
  // Before the managers go: the plugins are disconnected, the ones berthd started killed.
  void stop() { plugins_.reset(); }

  bool enabled() const { return plugins_ != nullptr; }
  // A plugin is subscribed to the event (views of pods and containers are built only then).
  bool wants(nri_api::Event event) const { return plugins_ && plugins_->wants(event); }
  std::vector<nri::PluginInfo> plugins() const;

  // ContainerManagerOptions::adjust_spec.
  Status adjust_spec(const SandboxInfo& pod, const runtime::v1::ContainerConfig& config, const std::string& id,
                     oci::Spec& spec);

  // After RunPodSandbox made the pod: an error fails the RunPodSandbox.
  Status pod_running(const std::string& pod_id);
  void pod_stopped(const std::string& pod_id);
  void pod_removed(const std::string& pod_id, const nri_api::PodSandbox& before);
  // What remove_pod will need after the pod is gone.
  nri_api::PodSandbox pod_view(const std::string& pod_id);
  Status pod_updating(const std::string& pod_id, const runtime::v1::LinuxContainerResources& overhead,
                      const runtime::v1::LinuxContainerResources& resources);
  void pod_updated(const std::string& pod_id);

  void container_created(const std::string& id);
  Status container_starting(const std::string& id);
  void container_started(const std::string& id);
  // The resources to apply, with what plugins changed of them.
  Result<runtime::v1::LinuxContainerResources> container_updating(const std::string& id,
                                                                  const runtime::v1::LinuxContainerResources& r);
  void container_updated(const std::string& id);
  void container_stopped(const std::string& id);
  void container_removed(const nri_api::PodSandbox& pod, const nri_api::Container& before);
  nri_api::Container container_view(const std::string& id);

 private:
  std::vector<nri_api::ContainerUpdate> apply_updates(const std::vector<nri_api::ContainerUpdate>& updates);
  void snapshot(std::vector<nri_api::PodSandbox>& pods, std::vector<nri_api::Container>& containers);
  void evict(const nri_api::ContainerEviction& e, const std::string& plugin);

  CdiRegistry* cdi_ = nullptr;
  SandboxManager* sandboxes_ = nullptr;
  ContainerManager* containers_ = nullptr;
  std::unique_ptr<nri::NriPlugins> plugins_;  // last: its threads call the members above
};

}  // namespace berth
