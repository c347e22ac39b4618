// run_daemon: serves CRI on the configured socket until SIGTERM/SIGINT, then drains and exits;
// SIGHUP reloads the configuration (server/config_reload.h). Under systemd (Type=notify) it says
// READY=1 once the socket serves.
#pragma once

#include <functional>

#include "berth/config.h"

namespace berth {

// Returns the process exit code: 0 after a clean shutdown, 1 when it could not start.
// `reload_config` reads the configuration again at each SIGHUP (files and flags, as at start);
// unset: SIGHUP keeps the configuration as it is.
int run_daemon(const Config& config, std::function<Result<Config>()> reload_config = {});

}  // namespace berth
