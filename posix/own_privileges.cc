// berthd's capability sets and OOM floor from /proc/self (read once: they do not change while
// berthd runs).
#include "berth/own_privileges.h"

#include <cstdlib>
#include <linux/capability.h>

#include "berth/file_text.h"

namespace berth {
namespace {

uint64_t hex_field(const std::string& status, const char* name) {
  size_t at = status.find(std::string("\n") + name + ":");
  if (at == std::string::npos) return 0;
  return std::strtoull(status.c_str() + at + 2 + std::char_traits<char>::length(name), nullptr, 16);
}

}  // namespace

int OwnPrivileges::oom_floor() const { return effective_has(CAP_SYS_RESOURCE) ? -1000 : oom_score_adj; }

OwnPrivileges parse_own_privileges(const std::string& status, const std::string& oom_score_adj) {
  OwnPrivileges p;
  std::string text = "\n" + status;
  p.effective = hex_field(text, "CapEff");
  p.bounding = hex_field(text, "CapBnd");
  p.oom_score_adj = std::atoi(oom_score_adj.c_str());
  return p;
}

const OwnPrivileges& own_privileges() {
  static const OwnPrivileges p =
      parse_own_privileges(read_text_file("/proc/self/status"), read_text_file("/proc/self/oom_score_adj"));
  return p;
}

}  // namespace berth
