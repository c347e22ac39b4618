// run_daemon: serves CRI on the configured socket until SIGTERM/SIGINT, then drains and exits.
#pragma once

#include "berth/config.h"

namespace berth {

// Returns the process exit code: 0 after a clean shutdown, 1 when it could not start.
int run_daemon(const Config& config);

}  // namespace berth
