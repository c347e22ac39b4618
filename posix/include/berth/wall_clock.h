// The wall clock as CRI timestamps carry it: nanoseconds since the Unix epoch.
#pragma once

#include <time.h>

#include <cstdint>

namespace berth {

inline int64_t wall_clock_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace berth
