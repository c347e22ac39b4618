// See heap_release.h.
#include "berth/heap_release.h"

#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define BERTH_SANITIZED_MALLOC 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BERTH_SANITIZED_MALLOC 1
#endif

namespace berth {

void release_free_heap() {
#ifndef BERTH_SANITIZED_MALLOC
  ::malloc_trim(0);
#endif
}

}  // namespace berth
