// Reading a CNI ADD result: the pod's IP addresses, from the 0.3.x / 0.4.0 / 1.0.0 form
// ("ips": [{"address": "10.88.0.5/16", ...}]) and the older 0.1.0 / 0.2.0 form ("ip4", "ip6").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth::cni {

// The addresses without prefix length, IPv4 first then IPv6, each in the order given.
Result<std::vector<std::string>> result_ips(const nlohmann::json& result);

}  // namespace berth::cni
