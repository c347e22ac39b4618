// Exec: checks the request and returns a single-use URL of the streaming server, where the client
// runs the command (the runtime's exec) over SPDY or WebSocket.
#include "request_checks.h"
#include "rpc_scope.h"
#include "services.h"
#include "memory_headroom.h"
#include "berth/container_manager.h"
#include "berth/streaming_server.h"
#include "stream_checks.h"

namespace berth {

grpc::Status RuntimeServiceImpl::Exec(grpc::ServerContext*, const v1::ExecRequest* req, v1::ExecResponse* resp) {
  RpcScope scope("Exec", "container=" + req->container_id());
  auto memory = ctx_.memory_headroom.enter("Exec", MemoryHeadroom::kSmallCost);
  if (!memory.ok()) return scope.done(memory.status());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  if (berth::Status s = check_command({req->cmd().begin(), req->cmd().end()}); !s.ok()) return scope.done(s);
  if (berth::Status s = check_stream_stdio(req->stdin(), req->stdout(), req->stderr(), req->tty()); !s.ok())
    return scope.done(s);
  auto info = running_container(ctx_.containers, req->container_id());
  if (!info.ok()) return scope.done(info.status());
  auto url = ctx_.streaming.register_exec({.container_id = info->id,
                                           .cmd = {req->cmd().begin(), req->cmd().end()},
                                           .tty = req->tty(),
                                           .stdin = req->stdin(),
                                           .stdout = req->stdout(),
                                           .stderr = req->stderr()});
  if (!url.ok()) return scope.done(url.status());
  resp->set_url(*url);
  return scope.done(ok_status());
}

}  // namespace berth
