// Handing malloc's free memory back to the kernel after work that used a lot of it once (a pull,
// a hostile streaming session); glibc keeps such memory for later unless asked.
#pragma once

namespace berth {

// malloc_trim(0), except in sanitizer builds: there ASan/TSan own malloc, glibc's allocator was
// never set up, and its malloc_trim would initialise it unlocked from several threads at once.
void release_free_heap();

}  // namespace berth
