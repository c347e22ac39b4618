// Each event carries the sandbox's status as it is after the change.
#include "sandbox_events.h"

#include <time.h>

namespace berth {

void publish_sandbox_event(ServiceContext& ctx, const std::string& id, v1::ContainerEventType type, bool with_status) {
  v1::ContainerEventResponse ev;
  ev.set_container_id(id);
  ev.set_container_event_type(type);
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  ev.set_created_at(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
  if (with_status) {
    v1::PodSandboxStatusResponse st;
    if (ctx.sandboxes.status(id, false, &st).ok()) *ev.mutable_pod_sandbox_status() = st.status();
  }
  ctx.container_events.publish(ev);
}

}  // namespace berth
