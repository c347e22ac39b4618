// config.dump of a checkpoint archive (checkpointctl's ContainerConfig, as CRI-O and containerd
// write it): which container it was and the image its writable layer sits on. Read from archives
// of any origin, so every field is checked and none is trusted beyond its type.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

struct CheckpointConfig {
  std::string id, name;
  std::string rootfs_image, rootfs_image_ref, rootfs_image_name;
  std::string runtime;
  // The image a restore builds on: the name as the checkpointed container's request gave it (so the
  // node's copy of that image is found again), else its reference.
  std::string base_image() const {
    if (!rootfs_image_name.empty()) return rootfs_image_name;
    if (!rootfs_image.empty()) return rootfs_image;
    return rootfs_image_ref;
  }
};

// INVALID_ARGUMENT naming the field for text that is not such an object.
Result<CheckpointConfig> parse_checkpoint_config(const std::string& text);

}  // namespace berth
