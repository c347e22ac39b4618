// See stream_checks.h.
#include "stream_checks.h"

namespace berth {

Status check_stream_stdio(bool in, bool out, bool err, bool tty) {
  if (!in && !out && !err) return invalid_argument("stdin, stdout, stderr: at least one must be requested");
  if (tty && err) return invalid_argument("tty: a terminal has no separate stderr; do not ask for both");
  return ok_status();
}

Result<ContainerInfo> running_container(ContainerManager& containers, const std::string& id_or_prefix) {
  auto info = containers.lookup(id_or_prefix);
  if (!info.ok()) return info.status();
  if (info->state != runtime::v1::CONTAINER_RUNNING)
    return failed_precondition("container " + info->id + " is not running");
  return *info;
}

}  // namespace berth
