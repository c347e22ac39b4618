// PullImage: credentials from AuthConfig (username/password, the base64 "auth" pair, an identity
// token or a registry token) go to the registry client and nowhere else: never into a log line.
#include <nettle/base64.h>

#include "berth/heap_release.h"
#include "berth/image_manager.h"
#include "image_handler.h"
#include "rpc_scope.h"
#include "berth/tracer.h"
#include "services.h"
#include "memory_headroom.h"
#include "berth/metrics_registry.h"
#include "call_limits.h"

namespace berth {

static Result<RegistryCredentials> credentials_of(const v1::AuthConfig& a) {
  RegistryCredentials c{a.username(), a.password(), a.identity_token(), a.registry_token(), a.server_address()};
  if (!a.auth().empty() && c.username.empty()) {
    std::string out(BASE64_DECODE_LENGTH(a.auth().size()), '\0');
    size_t n = 0;
    base64_decode_ctx ctx;
    base64_decode_init(&ctx);
    if (!base64_decode_update(&ctx, &n, reinterpret_cast<uint8_t*>(out.data()), a.auth().size(), a.auth().data()) ||
        !base64_decode_final(&ctx))
      return invalid_argument("auth.auth: not base64");
    out.resize(n);
    size_t colon = out.find(':');
    if (colon == std::string::npos) return invalid_argument("auth.auth: not a base64 'user:password' pair");
    c.username = out.substr(0, colon);
    c.password = out.substr(colon + 1);
  }
  return c;
}

grpc::Status ImageServiceImpl::PullImage(grpc::ServerContext* call, const v1::PullImageRequest* req,
                                         v1::PullImageResponse* resp) {
  RpcScope scope("PullImage", "image=" + req->image().image());
  auto slot = ctx_.call_limits.enter(CallClass::pull);
  if (!slot.ok()) return scope.done(slot.status());
  auto memory = ctx_.memory_headroom.enter("PullImage", MemoryHeadroom::kPullCost);
  if (!memory.ok()) return scope.done(memory.status());
  if (req->image().image().empty()) return scope.done(invalid_argument("image.image: no image reference given"));
  auto handler = image_handler_key(ctx_.runtimes, req->image().runtime_handler(), "image.runtime_handler", true);
  if (!handler.ok()) return scope.done(handler.status());
  auto creds = credentials_of(req->auth());
  if (!creds.ok()) return scope.done(creds.status());
  auto started = std::chrono::steady_clock::now();
  // A client that gives up (kubelet's timeout, a ^C) takes its share of the pull with it.
  ScopedSpan pull("image pull");
  pull.attribute("image.reference", req->image().image());
  auto r = ctx_.images.pull(
      req->image().image(), *creds, false, [call] { return call->IsCancelled(); }, handler->value_or(""));
  if (!r.ok()) pull.fail(r.status().message());
  // A pull's buffers (manifests up to their cap, decompression, a registry's answers) go back to
  // malloc, which would keep them for later; a node pulls rarely, so they go back to the kernel.
  release_free_heap();
  ctx_.image_pull_duration.observe({r.ok() ? "ok" : "error"},
                                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!r.ok()) return scope.done(r.status());
  resp->set_image_ref(r->id);
  return scope.done(ok_status());
}

}  // namespace berth
