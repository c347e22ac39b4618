// ImageSpec.runtime_handler on the image rpcs: which handler a pull is for, and which handler's
// images a status, list or removal asks about.
#pragma once

#include <optional>
#include <string>

#include "berth/runtime_handlers.h"
#include "berth/status.h"

namespace berth {

// The key image records keep for `given` (the default handler is "", named or not); nullopt when
// none was given. A handler berthd does not know is INVALID_ARGUMENT naming `field`; a pull
// (`for_new_work`) also refuses one a reload removed, as RunPodSandbox does.
Result<std::optional<std::string>> image_handler_key(const RuntimeHandlers& runtimes, const std::string& given,
                                                     const std::string& field, bool for_new_work);

}  // namespace berth
