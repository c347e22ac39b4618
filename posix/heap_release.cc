// See heap_release.h.
#include "berth/heap_release.h"

#include <malloc.h>

namespace berth {

void release_free_heap() {
#ifndef BERTH_SANITIZED  // cmake/sanitizers.cmake defines it in every sanitizer build
  ::malloc_trim(0);
#endif
}

}  // namespace berth
