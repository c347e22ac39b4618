// Each event carries the pod sandbox's status and its containers' statuses as they are after the
// change (a deleted container is no longer among them).
#include "lifecycle_events.h"

#include "berth/mutex.h"
#include "berth/wall_clock.h"
#include "pod_status_snapshot.h"

namespace berth {

namespace v1 = runtime::v1;

void LifecycleEvents::connect(SandboxManager& sandboxes, ContainerManager& containers) {
  MutexLock lock(mu_);
  sandboxes_ = &sandboxes;
  containers_ = &containers;
}

void LifecycleEvents::disconnect() {
  MutexLock lock(mu_);
  sandboxes_ = nullptr;
  containers_ = nullptr;
}

void LifecycleEvents::sandbox_changed(const std::string& id, v1::ContainerEventType type, bool with_status) {
  publish(id, id, type, with_status);
}

void LifecycleEvents::container_changed(const std::string& id, const std::string& sandbox_id,
                                        v1::ContainerEventType type) {
  publish(id, sandbox_id, type, true);
}

void LifecycleEvents::publish(const std::string& id, const std::string& sandbox_id, v1::ContainerEventType type,
                              bool with_status) {
  // Held while the statuses are read, so disconnect() waits for a publication in flight.
  MutexLock lock(mu_);
  if (!sandboxes_ || !containers_) return;
  v1::ContainerEventResponse ev;
  ev.set_container_id(id);
  ev.set_container_event_type(type);
  ev.set_created_at(wall_clock_ns());
  if (with_status) {
    v1::PodSandboxStatusResponse st;
    // Stamped as the event: the statuses are read after created_at, never before.
    if (read_pod_status(*sandboxes_, *containers_, sandbox_id, false, &st).ok()) {
      ev.set_created_at(st.timestamp());
      *ev.mutable_pod_sandbox_status() = std::move(*st.mutable_status());
      *ev.mutable_containers_statuses() = std::move(*st.mutable_containers_statuses());
    }
  }
  hub_.publish(ev);
}

}  // namespace berth
