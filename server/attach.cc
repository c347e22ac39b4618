// Attach: checks the request and returns a single-use URL of the streaming server, where the
// client joins the container's stdio through its monitor; detaching never stops the container.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::Attach(grpc::ServerContext*, const v1::AttachRequest* req, v1::AttachResponse* resp) {
  RpcScope scope("Attach", "container=" + req->container_id());
  if (req->container_id().empty()) return scope.done(invalid_argument("container_id: must not be empty"));
  if (!req->stdin() && !req->stdout() && !req->stderr())
    return scope.done(invalid_argument("stdin, stdout, stderr: at least one must be requested"));
  if (req->tty() && req->stderr()) return scope.done(invalid_argument("tty: a terminal has no separate stderr; do not ask for both"));
  auto info = ctx_.containers.info(req->container_id());
  if (!info) return scope.done(not_found("container " + req->container_id() + " not found"));
  if (info->state != v1::CONTAINER_RUNNING)
    return scope.done(failed_precondition("container " + info->id + " is not running"));
  if (req->stdin() && !info->stdin)
    return scope.done(invalid_argument("stdin: container " + info->id + " was created without stdin"));
  if (req->tty() != info->tty)
    return scope.done(invalid_argument(std::string("tty: container ") + info->id + (info->tty ? " has" : " has no") + " terminal"));
  auto url = ctx_.streaming.register_attach(
      {.container_id = info->id, .tty = req->tty(), .stdin = req->stdin(), .stdout = req->stdout(), .stderr = req->stderr()});
  if (!url.ok()) return scope.done(url.status());
  resp->set_url(*url);
  return scope.done(ok_status());
}

}  // namespace berth
