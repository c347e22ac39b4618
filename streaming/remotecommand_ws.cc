// Exec and attach over WebSocket: fixed channels (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize);
// the session starts right after the handshake, announced by an empty message on the lowest
// channel the server writes (stdout, else stderr, else error), as kubelet does.
#include "remotecommand.h"
#include "sessions.h"

namespace berth::streaming {

void serve_command_ws(ServerContext& ctx, std::shared_ptr<WsConnection> conn, PendingRequest request,
                      uint64_t registry_id) {
  bool in, out, err, tty;
  if (request.kind == SessionKind::attach) {
    in = request.attach.stdin, out = request.attach.stdout, err = request.attach.stderr, tty = request.attach.tty;
  } else {
    in = request.exec.stdin, out = request.exec.stdout, err = request.exec.stderr, tty = request.exec.tty;
  }
  err = err && !tty;
  CommandChannels ch;
  if (in) ch.stdin = conn->channel(ws::kStdin, true);
  if (out) ch.stdout = conn->channel(ws::kStdout, false);
  if (err) ch.stderr = conn->channel(ws::kStderr, false);
  ch.error = conn->channel(ws::kError, false);
  ch.resize = conn->channel(ws::kResize, true);
  ch.status_json = conn->protocol().status_json;
  auto first = out ? ch.stdout : err ? ch.stderr : ch.error;
  first->send("", nullptr);

  auto session = std::make_shared<CommandSession>(ctx, conn->executor(), std::move(request), ch, conn);
  conn->start([&ctx, registry_id, session](bool lost) {
    ctx.registry.remove(registry_id);
    session->connection_closed(lost);
  });
  session->start();
}

}  // namespace berth::streaming
