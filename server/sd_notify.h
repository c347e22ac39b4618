// notify_service_manager: systemd's readiness protocol (sd_notify(3)) for a Type=notify unit.
// Written by hand rather than linking libsystemd: the protocol is one datagram of "KEY=value"
// lines to the unix socket named by $NOTIFY_SOCKET (an abstract one when it starts with '@'), and
// libsystemd would add a shared library (~0.3 MiB of RSS, README "Memory") and its own
// dependencies (liblzma, libzstd, libgcrypt...) to a daemon that needs none of them.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// Moves $NOTIFY_SOCKET out of the environment into this module, at berthd's start before any
// thread: the programs berthd starts get its environment, and runc hands a NOTIFY_SOCKET it sees
// on to the container it creates (which would then speak for berthd.service).
void take_notify_socket();

// Sends `state` ("READY=1", "RELOADING=1\nMONOTONIC_USEC=...", "STOPPING=1") to the socket
// $NOTIFY_SOCKET named (at take_notify_socket, or now when it was not taken). OK and nothing sent
// when there is none (not under systemd).
Status notify_service_manager(const std::string& state);

// "RELOADING=1\nMONOTONIC_USEC=<now>": what systemd expects before a reload's READY=1.
std::string reloading_state();

}  // namespace berth
