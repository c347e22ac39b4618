// See call_limits.h. The shares: a quarter of the threads each for pulls, ExecSync and lifecycle
// calls, an eighth for event streams; an eighth or more stays for everything else.
#include "call_limits.h"

#include <algorithm>

namespace berth {

namespace {

const char* name_of(CallClass c) {
  switch (c) {
    case CallClass::pull: return "PullImage";
    case CallClass::exec_sync: return "ExecSync";
    case CallClass::events: return "GetContainerEvents";
    case CallClass::lifecycle: return "sandbox and container lifecycle";
  }
  return "?";
}

}  // namespace

CallLimits::CallLimits(int max) {
  limits_[static_cast<int>(CallClass::pull)] = std::max(1, max / 4);
  limits_[static_cast<int>(CallClass::exec_sync)] = std::max(1, max / 4);
  limits_[static_cast<int>(CallClass::events)] = std::max(1, max / 8);
  limits_[static_cast<int>(CallClass::lifecycle)] = std::max(1, max / 4);
}

Result<CallLimits::Slot> CallLimits::enter(CallClass c) {
  std::atomic<int>& n = in_use_[static_cast<int>(c)];
  if (n.fetch_add(1) >= limit(c)) {
    n.fetch_sub(1);
    return Status(Code::resource_exhausted, std::string("too many ") + name_of(c) + " calls in progress (" +
                                                std::to_string(limit(c)) +
                                                ", a share of max_concurrent_rpcs); retry later");
  }
  return Slot(&n);
}

}  // namespace berth
