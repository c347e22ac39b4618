// The armed fault point, read once from BERTH_FAULT_POINT (see fault_point.h). Dying uses SIGKILL
// on the whole process so no destructor, atexit handler or buffered write runs, as in a real kill.
#include "berth/fault_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace berth {
namespace {

const char* const kNames[] = {
#define BERTH_FAULT_POINT_NAME(name, rpc) #name,
    BERTH_FAULT_POINTS_LIST(BERTH_FAULT_POINT_NAME)
#undef BERTH_FAULT_POINT_NAME
};
constexpr int kCount = static_cast<int>(sizeof kNames / sizeof kNames[0]);

struct Armed {
  int point = -1;   // index into kNames, -1: none
  long target = 1;  // die at this hit
  std::atomic<long> hits{0};
};

Armed& armed() {
  static Armed a;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("BERTH_FAULT_POINT");
    if (!env || !*env) return;
    std::string spec = env, name = spec;
    if (size_t colon = spec.find(':'); colon != std::string::npos) {
      name = spec.substr(0, colon);
      a.target = std::max(1L, std::strtol(spec.c_str() + colon + 1, nullptr, 10));
    }
    for (int i = 0; i < kCount; ++i)
      if (name == kNames[i]) a.point = i;
    if (a.point < 0) std::fprintf(stderr, "berthd: BERTH_FAULT_POINT names no fault point: %s\n", env);
  });
  return a;
}

}  // namespace

void fault_point(FaultPoint point) {
  Armed& a = armed();
  if (a.point != static_cast<int>(point)) return;
  if (a.hits.fetch_add(1) + 1 != a.target) return;
  char line[160];
  int n = std::snprintf(line, sizeof line, "berthd: fault point %s reached: dying\n", kNames[a.point]);
  if (n > 0 && write(2, line, static_cast<size_t>(n)) < 0) {
  }
  kill(getpid(), SIGKILL);
  _exit(137);
}

}  // namespace berth
