// What the sandbox manager is given to reach the rest of berthd: its network through the CNI
// manager (the CRI -> CNI translation of a pod's ports, DNS and annotations) and the sandbox image
// policy (a configured sandbox_image is pinned, pulled when missing, and returned held).
#pragma once

#include <string>

#include "berth/cni_manager.h"
#include "berth/cri_messages.h"
#include "berth/image_manager.h"
#include "berth/sandbox_manager.h"

namespace berth {

// The CNI request for a pod: port mappings with CNI's protocol names, the pod's DNS config, its
// annotations (CNI capability args read some).
PodNetworkRequest pod_network_request(const SandboxNetworkRequest& r);

// Network setup, teardown, check and recorded IPs of sandboxes, through `cni`.
class CniSandboxNetwork final : public SandboxNetwork {
 public:
  explicit CniSandboxNetwork(CniManager& cni) : cni_(cni) {}
  Result<std::vector<std::string>> setup(const SandboxNetworkRequest& request) override;
  Status teardown(const std::string& id, const std::string& netns_path) override;
  std::vector<std::string> recorded_ips(const std::string& id) override;
  Status check(const std::string& id, const std::string& netns_path) override;

 private:
  CniManager& cni_;
};

// The image a sandbox runs from when `reference` (config: sandbox_image) is set: found or pulled,
// pinned so kubelet's image GC spares it, and held for the sandbox that asked. With no reference
// the pause is the embedded one, and only the holds of recovered sandboxes are served.
class SandboxImagePolicy final : public SandboxImages {
 public:
  SandboxImagePolicy(ImageManager& images, std::string reference) : images_(images), reference_(std::move(reference)) {}
  Result<std::optional<PauseImage>> pause_image() override;
  void hold(const std::string& image_id) override { images_.hold(image_id); }
  void release(const std::string& image_id) override { images_.release(image_id); }

 private:
  ImageManager& images_;
  std::string reference_;
};

}  // namespace berth
