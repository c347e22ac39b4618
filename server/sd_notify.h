// notify_service_manager: systemd's readiness protocol (sd_notify(3)) for a Type=notify unit.
// Written by hand rather than linking libsystemd: the protocol is one datagram of "KEY=value"
// lines to the unix socket named by $NOTIFY_SOCKET (an abstract one when it starts with '@'), and
// libsystemd would add a shared library (~0.3 MiB of RSS, README "Memory") and its own
// dependencies (liblzma, libzstd, libgcrypt...) to a daemon that needs none of them.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// Sends `state` ("READY=1", "RELOADING=1\nMONOTONIC_USEC=...", "STOPPING=1") to the socket
// $NOTIFY_SOCKET names. OK and nothing sent when the variable is unset or empty (not under systemd).
Status notify_service_manager(const std::string& state);

// "RELOADING=1\nMONOTONIC_USEC=<now>": what systemd expects before a reload's READY=1.
std::string reloading_state();

}  // namespace berth
