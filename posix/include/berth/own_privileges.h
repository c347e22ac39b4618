// What berthd itself may grant, read once from /proc/self: its capability sets and the lowest OOM
// score it can give a child. The one probe sandboxes, containers and the spec builder share.
#pragma once

#include <cstdint>
#include <string>

namespace berth {

struct OwnPrivileges {
  uint64_t effective = 0;  // CapEff
  uint64_t bounding = 0;   // CapBnd: what any child can ever hold
  int oom_score_adj = 0;   // berthd's own

  bool effective_has(int cap) const { return cap >= 0 && cap < 64 && ((effective >> cap) & 1); }
  // Without CAP_SYS_RESOURCE the kernel refuses an oom_score_adj below berthd's own.
  int oom_floor() const;
};

// Parsed from the text of /proc/self/status and /proc/self/oom_score_adj (missing fields: zero).
OwnPrivileges parse_own_privileges(const std::string& status, const std::string& oom_score_adj);

// berthd's own, read at the first call.
const OwnPrivileges& own_privileges();

}  // namespace berth
