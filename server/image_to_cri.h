// ImageRecord -> CRI Image, shared by ImageStatus and ListImages.
#pragma once

#include "berth/cri_messages.h"
#include "berth/image_manager.h"

namespace berth {

void image_to_cri(const ImageRecord& r, runtime::v1::Image* out);

}  // namespace berth
