// The runtime handler table berthd serves with: the configured handlers, and the host's facts
// probed once at start (mount_setattr, and the id-mapped overlay pods with user namespaces of
// their own need). Internal to server/.
#pragma once

#include <string>

#include "berth/config.h"
#include "berth/runtime_handlers.h"
#include "berth/status.h"

namespace berth {

struct HostProbe {
  // OK when pods may have user namespaces of their own, else why not (SandboxManager refuses
  // such pods with it).
  Status user_namespaces;
  HostFeatures features;
};

// Probes this host once, with a scratch dir under `root_dir` (where the image layers are), and
// logs the outcome.
HostProbe probe_host(const std::string& root_dir);

// Each [runtimes.<name>] as configured; a handler without a root gets its own under
// <state>/runtime/<name>. The default handler and the cgroup driver come from the config too.
RuntimeHandlers runtime_handlers_from_config(const Config& config, const HostFeatures& host);

// Asks every handler's runtime now, at start (later calls answer from the table's cache), and logs
// what each can do on this host.
void log_runtime_handlers(const RuntimeHandlers& runtimes);

}  // namespace berth
