// What the sandbox manager is given to reach the rest of berthd: its network through the CNI
// manager (the CRI -> CNI translation of a pod's ports, DNS and annotations) and the sandbox image
// policy (a configured sandbox_image is pinned, pulled when missing, and returned held).
#pragma once

#include <string>

#include "berth/cni_manager.h"
#include "berth/cri_api.h"
#include "berth/image_manager.h"
#include "berth/sandbox_manager.h"

namespace berth {

// The CNI request for a pod: port mappings with CNI's protocol names, the pod's DNS config, its
// annotations (CNI capability args read some).
PodNetworkRequest pod_network_request(const SandboxNetworkRequest& r);

// Network setup, teardown, check and recorded IPs of sandboxes, through `cni`.
SandboxNetworkHooks cni_network_hooks(CniManager& cni);

// The image a sandbox runs from when `reference` (config: sandbox_image) is set: found or pulled,
// pinned so kubelet's image GC spares it, and held for the sandbox that asked.
std::function<Result<PauseImage>()> sandbox_image_source(ImageManager& images, std::string reference);

}  // namespace berth
