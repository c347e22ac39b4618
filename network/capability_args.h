// The runtimeConfig a plugin receives: the capability arguments (portMappings, dns, bandwidth,
// io.kubernetes.cri.pod-annotations) it declares in "capabilities", and no others.
#pragma once

#include <nlohmann/json.hpp>

#include "berth/cni_manager.h"
#include "berth/status.h"

namespace berth::cni {

// Everything berth can offer for this pod, keyed by capability name, for a network of `plugins`
// (its "plugins" array). The bandwidth annotations are read only when one of those plugins asks
// for the bandwidth capability; then a bad one is an INVALID_ARGUMENT naming the annotation.
Result<nlohmann::json> capability_args(const PodNetworkRequest& request, const nlohmann::json& plugins);

// Whether any plugin of `plugins` declares {"capabilities": {name: true}}.
bool wants_capability(const nlohmann::json& plugins, const std::string& name);

// The subset of `offered` that `plugin` asks for ({"capabilities": {"portMappings": true}}).
nlohmann::json runtime_config_for(const nlohmann::json& plugin, const nlohmann::json& offered);

// Parses a Kubernetes quantity as bits per second: "10M" = 10,000,000; "1Gi" = 2^30.
Result<unsigned long long> parse_bandwidth(const std::string& quantity);

}  // namespace berth::cni
