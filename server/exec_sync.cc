// ExecSync: runs a command in a running container and returns its output and exit code; a
// timeout kills the command and is DEADLINE_EXCEEDED (kubelet's probes read it so).
#include "request_checks.h"
#include "rpc_scope.h"
#include "services.h"
#include "berth/container_manager.h"
#include "call_limits.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ExecSync(grpc::ServerContext*, const v1::ExecSyncRequest* req,
                                          v1::ExecSyncResponse* resp) {
  RpcScope scope("ExecSync", "container=" + req->container_id());
  auto slot = ctx_.call_limits.enter(CallClass::exec_sync);
  if (!slot.ok()) return scope.done(slot.status());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  if (berth::Status s = check_command({req->cmd().begin(), req->cmd().end()}); !s.ok()) return scope.done(s);
  if (req->timeout() < 0) return scope.done(invalid_argument("timeout: must not be negative"));
  auto out = ctx_.containers.exec_sync(req->container_id(), {req->cmd().begin(), req->cmd().end()}, req->timeout());
  if (!out.ok()) return scope.done(out.status());
  resp->set_stdout(std::move(out->out));
  resp->set_stderr(std::move(out->err));
  resp->set_exit_code(out->exit_code);
  return scope.done(ok_status());
}

}  // namespace berth
