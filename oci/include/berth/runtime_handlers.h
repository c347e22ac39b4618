// The configured runtime handlers (handler name -> OCI runtime binary and --root) and the one
// answer to "which runtime runs handler X", shared by sandboxes, containers, Status and the
// start-up sweep, with one error text for an unknown handler.
#pragma once

#include <string>
#include <vector>

#include "berth/oci_runtime.h"
#include "berth/status.h"

namespace berth {

struct RuntimeHandler {
  std::string name;
  std::string binary;
  std::string root;  // the runtime's --root
};

class RuntimeHandlers {
 public:
  RuntimeHandlers() = default;
  // `default_name` must be one of `handlers` (config checks it).
  RuntimeHandlers(std::vector<RuntimeHandler> handlers, std::string default_name, bool systemd_cgroup);

  // "" is the default handler. An unknown one: INVALID_ARGUMENT naming the request field
  // runtime_handler and the known handlers.
  Result<OciRuntime> runtime_for(const std::string& handler) const;
  // nullptr when unknown; "" is the default handler.
  const RuntimeHandler* find(const std::string& handler) const;
  // The name recorded for a request's handler: "" becomes the default's name.
  std::string resolve(const std::string& handler) const { return handler.empty() ? default_name_ : handler; }

  const std::string& default_name() const { return default_name_; }
  const std::vector<RuntimeHandler>& all() const { return handlers_; }
  bool systemd_cgroup() const { return systemd_cgroup_; }

 private:
  std::vector<RuntimeHandler> handlers_;
  std::string default_name_;
  bool systemd_cgroup_ = false;
};

}  // namespace berth
