// GetContainerEvents: a server stream of container (and sandbox) lifecycle events for kubelet's
// Evented PLEG. Each stream reads its own bounded subscription of the daemon's EventHub; a
// subscriber that falls too far behind is dropped and its stream ends with RESOURCE_EXHAUSTED,
// so one slow client never slows the runtime.
#include <spdlog/spdlog.h>

#include "rpc_scope.h"
#include "services.h"
#include "berth/event_hub.h"
#include "call_limits.h"

namespace berth {

grpc::Status RuntimeServiceImpl::GetContainerEvents(grpc::ServerContext* ctx, const v1::GetEventsRequest*,
                                                    grpc::ServerWriter<v1::ContainerEventResponse>* writer) {
  RpcScope scope("GetContainerEvents");
  auto slot = ctx_.call_limits.enter(CallClass::events);
  if (!slot.ok()) return scope.done(slot.status());
  auto sub = ctx_.container_events.subscribe();
  scope.add_id("subscriber", std::to_string(sub->id()));
  // The handler may be blocked in Write on a client that stopped reading: cancelling the call
  // frees it (and its rpc thread) at once instead of when the client finally goes.
  sub->set_on_dropped([ctx] { ctx->TryCancel(); });
  spdlog::debug("GetContainerEvents: subscriber {} connected", sub->id());
  writer->SendInitialMetadata();  // the client sees the stream is open before any event
  while (!ctx->IsCancelled()) {
    auto event = sub->next(std::chrono::milliseconds(250));
    if (event) {
      if (!writer->Write(*event)) break;  // the client went away
      continue;
    }
    if (sub->dropped()) break;
    if (sub->ended()) break;  // berthd is shutting down
  }
  spdlog::debug("GetContainerEvents: subscriber {} left", sub->id());
  if (sub->dropped())
    return scope.done(
        berth::Status(Code::resource_exhausted,
                      "GetContainerEvents: this subscriber fell too far behind and was dropped; subscribe again"));
  return scope.done(ok_status());
}

}  // namespace berth
