// The runtime handler table: a short list searched by name (a node configures a handful).
#include "berth/runtime_handlers.h"

namespace berth {

RuntimeHandlers::RuntimeHandlers(std::vector<RuntimeHandler> handlers, std::string default_name, bool systemd_cgroup)
    : handlers_(std::move(handlers)), default_name_(std::move(default_name)), systemd_cgroup_(systemd_cgroup) {}

const RuntimeHandler* RuntimeHandlers::find(const std::string& handler) const {
  std::string name = resolve(handler);
  for (const auto& h : handlers_)
    if (h.name == name) return &h;
  return nullptr;
}

Result<OciRuntime> RuntimeHandlers::runtime_for(const std::string& handler) const {
  const RuntimeHandler* h = find(handler);
  if (!h) {
    std::string known;
    for (const auto& k : handlers_) known += (known.empty() ? "" : ", ") + k.name;
    return invalid_argument("runtime_handler: unknown handler '" + resolve(handler) + "' (known: " + known + ")");
  }
  return OciRuntime(h->binary, h->root, systemd_cgroup_);
}

}  // namespace berth
