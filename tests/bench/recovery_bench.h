// A restart under load: after the script restarted the runtime with pods running, how long until
// it answers (Version) and until every pod and container is listed ready and running again; and
// the removal of every pod the runtime lists, as kubelet would remove them.
#pragma once

#include <cstddef>
#include <string>

#include "berth/cri_api.h"

namespace berth::bench {

// Polls from now until `pods` sandboxes are SANDBOX_READY and as many containers RUNNING; prints
// the time to the first answer and to that, or gives up after `timeout_s`. False on giving up.
bool wait_recovered(const std::string& target, size_t pods, double timeout_s);

// StopPodSandbox + RemovePodSandbox of every listed pod at `concurrency`; prints the time taken.
void remove_all_pods(runtime::v1::RuntimeService::Stub& rt, size_t concurrency);

}  // namespace berth::bench
