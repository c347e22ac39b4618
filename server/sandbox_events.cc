// Each event carries the pod sandbox's status and its containers' statuses as they are after the
// change (a deleted container is no longer among them).
#include "sandbox_events.h"

#include "berth/wall_clock.h"


namespace berth {

namespace {

v1::ContainerEventResponse event(const std::string& id, v1::ContainerEventType type) {
  v1::ContainerEventResponse ev;
  ev.set_container_id(id);
  ev.set_container_event_type(type);
  ev.set_created_at(wall_clock_ns());
  return ev;
}

void add_pod_statuses(ServiceContext& ctx, const std::string& sandbox_id, v1::ContainerEventResponse& ev) {
  v1::PodSandboxStatusResponse st;
  if (ctx.sandboxes.status(sandbox_id, false, &st).ok()) *ev.mutable_pod_sandbox_status() = st.status();
  for (const auto& cid : ctx.containers.ids_in_sandbox(sandbox_id)) {
    v1::ContainerStatusResponse cs;
    if (ctx.containers.status(cid, false, &cs).ok()) *ev.add_containers_statuses() = cs.status();
  }
}

}  // namespace

void publish_sandbox_event(ServiceContext& ctx, const std::string& id, v1::ContainerEventType type, bool with_status) {
  v1::ContainerEventResponse ev = event(id, type);
  if (with_status) add_pod_statuses(ctx, id, ev);
  ctx.container_events.publish(ev);
}

void publish_container_event(ServiceContext& ctx, const std::string& container_id, const std::string& sandbox_id,
                             v1::ContainerEventType type) {
  v1::ContainerEventResponse ev = event(container_id, type);
  add_pod_statuses(ctx, sandbox_id, ev);
  ctx.container_events.publish(ev);
}

}  // namespace berth
