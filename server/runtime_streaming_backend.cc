// RuntimeStreamingBackend; see runtime_streaming_backend.h. An attach session's control connection to
// the monitor stays open for the session and is its done fd: the monitor sends the exit on it,
// and closing it detaches (the container keeps running).
#include "runtime_streaming_backend.h"

#include <fcntl.h>

#include <memory>

#include "berth/monitor.h"
#include "berth/netns_connect.h"

namespace berth {

namespace v1 = runtime::v1;

Result<StreamIo> RuntimeStreamingBackend::exec(const ExecTarget& t) {
  auto s =
      containers_.exec_session(t.container_id, {t.cmd, t.tty, t.stdin, t.stdout, t.stderr, t.tty_width, t.tty_height});
  if (!s.ok()) return s.status();
  StreamIo io{std::move(s->stdin_fd), std::move(s->stdout_fd), std::move(s->stderr_fd), std::move(s->done_fd),
              std::move(s->resize),   std::move(s->wait),      std::move(s->kill)};
  return io;
}

Result<StreamIo> RuntimeStreamingBackend::attach(const AttachTarget& t) {
  auto info = containers_.info(t.container_id);
  if (!info) return not_found("container " + t.container_id + " not found");
  if (info->state != v1::CONTAINER_RUNNING)
    return failed_precondition("attach to container " + info->id + ": it is not running");
  auto session =
      berth::attach(info->monitor_socket, {.want_stdin = t.stdin, .want_stdout = t.stdout, .want_stderr = t.stderr});
  if (!session.ok()) return session.status().context("attach to container " + info->id);
  auto owned = std::make_shared<AttachSession>(std::move(*session));
  StreamIo io;
  io.stdin_fd = std::move(owned->stdin_fd);
  io.stdout_fd = std::move(owned->stdout_fd);
  io.stderr_fd = std::move(owned->stderr_fd);
  io.done_fd = UniqueFd(::fcntl(owned->control_fd(), F_DUPFD_CLOEXEC, 0));
  if (!io.done_fd) return errno_status(errno, "attach to container " + info->id);
  io.resize = [owned](uint16_t width, uint16_t height) { (void)owned->resize(height, width); };
  io.outcome = [owned]() -> Result<int> { return 0; };  // an attach that ends reports success, as kubelet's
  io.cancel = [] {};  // the session (and the monitor connection) goes with the last callback
  return io;
}

Result<UniqueFd> RuntimeStreamingBackend::connect_port(const std::string& sandbox_id, int32_t port) {
  auto info = sandboxes_.info(sandbox_id);
  if (!info) return not_found("pod sandbox " + sandbox_id + " not found");
  if (!info->ready) return failed_precondition("pod sandbox " + info->id + " is not ready");
  return connect_in_netns(info->netns_path, port);  // empty for host-network pods: the host's
}

}  // namespace berth
