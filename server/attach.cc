// Attach: checks the request and returns a single-use URL of the streaming server, where the
// client joins the container's stdio through its monitor; detaching never stops the container.
#include "rpc_scope.h"
#include "services.h"
#include "memory_headroom.h"
#include "berth/container_manager.h"
#include "berth/streaming_server.h"
#include "stream_checks.h"

namespace berth {

grpc::Status RuntimeServiceImpl::Attach(grpc::ServerContext*, const v1::AttachRequest* req, v1::AttachResponse* resp) {
  RpcScope scope("Attach", "container=" + req->container_id());
  auto memory = ctx_.memory_headroom.enter("Attach", MemoryHeadroom::kSmallCost);
  if (!memory.ok()) return scope.done(memory.status());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  if (berth::Status s = check_stream_stdio(req->stdin(), req->stdout(), req->stderr(), req->tty()); !s.ok())
    return scope.done(s);
  auto info = running_container(ctx_.containers, req->container_id());
  if (!info.ok()) return scope.done(info.status());
  if (req->stdin() && !info->stdin)
    return scope.done(invalid_argument("stdin: container " + info->id + " was created without stdin"));
  if (req->tty() != info->tty)
    return scope.done(
        invalid_argument(std::string("tty: container ") + info->id + (info->tty ? " has" : " has no") + " terminal"));
  auto url = ctx_.streaming.register_attach({.container_id = info->id,
                                             .tty = req->tty(),
                                             .stdin = req->stdin(),
                                             .stdout = req->stdout(),
                                             .stderr = req->stderr()});
  if (!url.ok()) return scope.done(url.status());
  resp->set_url(*url);
  return scope.done(ok_status());
}

}  // namespace berth
