// Capability names are checked and numbered with libcap (cap_from_name, cap_to_name,
// cap_max_bits), so berth accepts exactly the capabilities this kernel and libcap know. What a
// container can hold is bounded by berthd's own bounding set: the runtime, its child, can grant
// no more, so ALL and privileged mean that set, and a named capability outside it is refused.
#include <sys/capability.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "berth/container_security.h"
#include "berth/own_privileges.h"

namespace berth {

const std::vector<std::string>& default_capabilities() {
  static const std::vector<std::string> caps = {
      "CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
      "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
      "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
      "CAP_KILL",    "CAP_AUDIT_WRITE"};
  return caps;
}

const std::vector<std::string>& default_masked_paths() {
  static const std::vector<std::string> paths = {
      "/proc/asound",        "/proc/acpi",          "/proc/kcore",       "/proc/keys",
      "/proc/latency_stats", "/proc/timer_list",    "/proc/timer_stats", "/proc/sched_debug",
      "/proc/scsi",          "/proc/sysrq-trigger", "/sys/firmware",     "/sys/devices/virtual/powercap"};
  return paths;
}

const std::vector<std::string>& default_readonly_paths() {
  static const std::vector<std::string> paths = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                                 "/proc/sysrq-trigger"};
  return paths;
}

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool is_all(const std::string& name) { return upper(name) == "ALL"; }

// "net_admin", "CAP_NET_ADMIN", "Net_Admin" -> its number; -1 when libcap does not know it.
int cap_number(const std::string& name) {
  std::string n = upper(name);
  if (n.rfind("CAP_", 0) != 0) n = "CAP_" + n;
  cap_value_t v;
  if (cap_from_name(n.c_str(), &v) != 0) return -1;
  return static_cast<int>(v);
}

std::string cap_name(int number) {
  char* text = cap_to_name(static_cast<cap_value_t>(number));
  std::string out = text ? upper(text) : "CAP_" + std::to_string(number);
  cap_free(text);
  return out;
}

// A zero bounding set is one that could not be read: no limit is known.
bool grantable(int cap, uint64_t bounding) {
  return bounding == 0 || (cap >= 0 && cap < 64 && ((bounding >> cap) & 1));
}

Status check_names(const std::vector<std::string>& names, const char* field, uint64_t bounding,
                   bool must_be_grantable) {
  for (const auto& n : names) {
    if (is_all(n)) continue;
    int num = cap_number(n);
    if (num < 0)
      return invalid_argument(std::string("linux.security_context.capabilities.") + field + ": unknown capability '" +
                              n + "'");
    if (must_be_grantable && !grantable(num, bounding))
      return invalid_argument(std::string("linux.security_context.capabilities.") + field + ": " + cap_name(num) +
                              " is not in berthd's bounding set, so no container on this host can hold it");
  }
  return ok_status();
}

}  // namespace

Result<CapabilitySet> resolve_capabilities(const CapabilityRequest& req) {
  const uint64_t bounding = req.bounding ? *req.bounding : own_privileges().bounding;
  if (Status s = check_names(req.add, "add_capabilities", bounding, !req.privileged); !s.ok()) return s;
  if (Status s = check_names(req.drop, "drop_capabilities", bounding, false); !s.ok()) return s;
  if (Status s = check_names(req.ambient, "add_ambient_capabilities", bounding, false); !s.ok()) return s;

  std::map<int, bool> set;  // ordered by number
  // Every capability berthd can grant: some hosts (nested, hardened, this build machine) withhold
  // a few even from root, and asking the runtime for one fails the container's start.
  auto all = [&] {
    for (int i = 0; i < static_cast<int>(cap_max_bits()); ++i)
      if (grantable(i, bounding)) set[i] = true;
  };
  if (req.privileged) {
    all();
  } else {
    for (const auto& n : default_capabilities())
      if (grantable(cap_number(n), bounding)) set[cap_number(n)] = true;
    // ALL is applied before the named entries, so "add ALL, drop NET_RAW" and "drop ALL, add
    // CHOWN" both mean what they say.
    if (std::any_of(req.add.begin(), req.add.end(), is_all)) all();
    if (std::any_of(req.drop.begin(), req.drop.end(), is_all)) set.clear();
    for (const auto& n : req.add)
      if (!is_all(n)) set[cap_number(n)] = true;
    for (const auto& n : req.drop)
      if (!is_all(n)) set.erase(cap_number(n));
  }
  CapabilitySet out;
  for (const auto& [num, on] : set) out.caps.push_back(cap_name(num));
  for (const auto& n : req.ambient) {
    if (is_all(n))
      return invalid_argument("linux.security_context.capabilities.add_ambient_capabilities: ALL is not allowed");
    int num = cap_number(n);
    if (!set.count(num))
      return invalid_argument("linux.security_context.capabilities.add_ambient_capabilities: '" + n +
                              "' is not in the container's capability set");
    std::string name = cap_name(num);
    if (std::find(out.ambient.begin(), out.ambient.end(), name) == out.ambient.end()) out.ambient.push_back(name);
  }
  return out;
}

Result<uint64_t> capability_mask(const std::vector<std::string>& names, const std::string& field) {
  uint64_t mask = 0;
  for (const auto& n : names) {
    int num = cap_number(n);
    if (num < 0 || num >= 64) return invalid_argument(field + ": unknown capability '" + n + "'");
    mask |= uint64_t{1} << num;
  }
  return mask;
}

}  // namespace berth
