// Lifecycle events for GetContainerEvents: kubelet's Evented PLEG reads sandbox events (the
// sandbox id as container id) and container events on one stream, each with the pod's status and
// the statuses of its containers as they are after the change. One object publishes both: the
// container manager receives it as its ContainerEventSink, the rpc handlers call it for sandboxes.
#pragma once

#include <mutex>
#include <string>

#include "berth/container_manager.h"
#include "berth/cri_messages.h"
#include "berth/event_hub.h"
#include "berth/mutex.h"
#include "berth/sandbox_manager.h"

namespace berth {

class LifecycleEvents final : public ContainerEventSink {
 public:
  explicit LifecycleEvents(EventHub<runtime::v1::ContainerEventResponse>& hub) : hub_(hub) {}

  // Events need both managers for the statuses they carry; until connect() (while the managers
  // recover at start, before any client can subscribe) nothing is published. disconnect() comes
  // before the managers go.
  void connect(SandboxManager& sandboxes, ContainerManager& containers);
  void disconnect();

  void sandbox_changed(const std::string& id, runtime::v1::ContainerEventType type, bool with_status = true);
  void container_changed(const std::string& id, const std::string& sandbox_id,
                         runtime::v1::ContainerEventType type) override;

 private:
  void publish(const std::string& id, const std::string& sandbox_id, runtime::v1::ContainerEventType type,
               bool with_status);

  EventHub<runtime::v1::ContainerEventResponse>& hub_;
  Mutex mu_;
  SandboxManager* sandboxes_ BERTH_GUARDED_BY(mu_) = nullptr;
  ContainerManager* containers_ BERTH_GUARDED_BY(mu_) = nullptr;
};

}  // namespace berth
