// What an exec or attach session writes on its error stream when it ends: with remote-command v4
// and later a Kubernetes Status object (its JSON), before v4 the error text (nothing on success).
#pragma once

#include <string>

#include "berth/status.h"

namespace berth::streaming {

enum class SessionVerb { exec, attach };

// `outcome` is the exit code or why there is none. Attach sessions report success whatever the
// exit code, as kubelet does.
std::string exit_status_message(bool status_json, SessionVerb verb, const Result<int>& outcome);

// The Status JSON for a session that could not start (the backend refused or failed).
std::string start_failure_message(bool status_json, SessionVerb verb, const Status& why);

}  // namespace berth::streaming
