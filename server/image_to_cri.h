// ImageRecord -> CRI Image, shared by ImageStatus and ListImages.
#pragma once

#include "berth/cri_messages.h"
#include "berth/image_manager.h"
#include "pinned_images.h"

namespace berth {

// `pinned`: berth.toml's pinned_images, besides the record's own pin (the sandbox image).
void image_to_cri(const ImageRecord& r, const PinnedImages& pinned, runtime::v1::Image* out);

}  // namespace berth
