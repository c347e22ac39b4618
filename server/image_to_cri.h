// ImageRecord -> CRI Image, shared by ImageStatus and ListImages.
#pragma once

#include <string>

#include "berth/cri_messages.h"
#include "berth/image_manager.h"
#include "pinned_images.h"

namespace berth {

// `pinned`: berth.toml's pinned_images, besides the record's own pin (the sandbox image).
// `asked_handler`: the ImageSpec.runtime_handler of the request, reported back; without one, the
// handler the image was pulled for when it was pulled for one alone.
void image_to_cri(const ImageRecord& r, const PinnedImages& pinned, runtime::v1::Image* out,
                  const std::string& asked_handler = "");

}  // namespace berth
