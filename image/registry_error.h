// The registry's own words when it refuses a request.
#pragma once

#include <string>

namespace berth {

// The registry's error text ({"errors":[{"code":…,"message":…}]}, "CODE: message" of the first),
// which never holds secrets; empty for a body of another shape.
std::string registry_error_text(const std::string& body);

}  // namespace berth
