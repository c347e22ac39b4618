// Pod clean-up every benchmark that made sandboxes ends with (best effort: it prints figures,
// and a failure here only leaves pods the bench script's daemon removal takes away).
#pragma once

#include <string>
#include <vector>

#include "berth/cri_api.h"

namespace berth::bench {

void remove_pods(runtime::v1::RuntimeService::Stub& rt, const std::vector<std::string>& ids);

}  // namespace berth::bench
