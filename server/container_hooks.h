// What the container manager is given to reach the rest of berthd: its pods through the sandbox
// manager and its images through the image store (ContainerPods and ContainerImages, the narrow
// interfaces container/ declares, as streaming/ declares its backend).
#pragma once

#include "berth/container_manager.h"
#include "berth/image_manager.h"
#include "berth/sandbox_manager.h"

namespace berth {

class ManagedPods final : public ContainerPods {
 public:
  explicit ManagedPods(SandboxManager& sandboxes) : sandboxes_(sandboxes) {}
  Result<SandboxLease> lease(const std::string& sandbox_id) override { return sandboxes_.lease(sandbox_id); }
  std::optional<SandboxInfo> info(const std::string& sandbox_id) override { return sandboxes_.info(sandbox_id); }

 private:
  SandboxManager& sandboxes_;
};

class StoredImages final : public ContainerImages {
 public:
  explicit StoredImages(ImageManager& images) : images_(images) {}
  Result<ImageHold> acquire(const std::string& reference) override { return images_.acquire(reference); }
  std::vector<std::string> snapshot_dirs(const ImageRecord& image) override { return images_.snapshot_dirs(image); }
  std::optional<ImageRecord> find(const std::string& reference) override { return images_.find(reference); }
  std::map<std::string, std::string> annotations(const ImageRecord& image) override {
    return images_.manifest_annotations(image);
  }
  void hold(const std::string& image_id) override { images_.hold(image_id); }
  void release(const std::string& image_id) override { images_.release(image_id); }

 private:
  ImageManager& images_;
};

}  // namespace berth
