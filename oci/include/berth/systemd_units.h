// SystemdUnits: berth's side of the systemd cgroup driver, the units it asks systemd for over
// D-Bus (org.freedesktop.systemd1 on the system bus, as runc's, crun's and kubelet's systemd
// drivers do): a transient scope for a pause that berth-pause-launch starts without the runtime,
// the properties of a slice berth caused to exist, and stopping either once its pod is gone. On a
// systemd node a cgroup belongs to the unit systemd made for it; writing it behind systemd's back
// is undone at the next daemon-reload, so every limit berth writes is a unit property too.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "berth/cgroup_limits.h"
#include "berth/status.h"

namespace berth {

// One unit property as systemd's D-Bus API types it: b, t, s, ay or au.
struct UnitProperty {
  std::string name;
  std::variant<bool, uint64_t, std::string, std::vector<uint8_t>, std::vector<uint32_t>> value;
};

// The properties that give a unit `limits` (cgroup v2 or v1 names), with the conversions runc's
// systemd driver makes: cpu shares to CPUWeight, a quota to CPUQuotaPerSecUSec rounded up to
// systemd's 10 ms, cpusets to bitmasks. Fields left zero or empty give no property. INVALID_ARGUMENT
// for a cpuset that does not parse.
Result<std::vector<UnitProperty>> unit_properties(const CgroupLimits& limits, bool cgroup_v2);

// "0-3,7" as systemd's CPU and NUMA node masks: bit n of byte n / 8.
Result<std::vector<uint8_t>> cpuset_bitmask(const std::string& list);

struct ScopeUnit {
  std::string name;   // "berth-<id>.scope"
  std::string slice;  // its parent, "kubepods-burstable-pod<uid>.slice"; made by systemd if missing
  pid_t pid = 0;      // the process the scope starts with
  std::string description;
  std::vector<UnitProperty> properties;  // limits and device policy, besides the scope's own
};

class SystemdUnits {
 public:
  // Connects at the first call (and again after a lost connection), so berthd starts before the
  // bus does. Each call waits for systemd's job to finish, for at most `job_timeout`.
  explicit SystemdUnits(std::chrono::milliseconds job_timeout = std::chrono::seconds(30));
  ~SystemdUnits();
  SystemdUnits(const SystemdUnits&) = delete;
  SystemdUnits& operator=(const SystemdUnits&) = delete;

  // The scope, Delegate=yes and without default dependencies (a node's shutdown order is
  // kubelet's), with `pid` moved into it once the call returns OK.
  Status start_scope(const ScopeUnit& scope);
  // Stops a unit and forgets a failed state it may keep; one systemd does not know is OK.
  Status stop_unit(const std::string& name);
  // Whether systemd has the unit active (a slice kubelet made is; one nothing named yet is not:
  // systemd makes a slice's cgroup only once a unit below it starts, so its directory cannot tell).
  Result<bool> unit_active(const std::string& name);
  // Sets properties of a running unit (runtime only, as a transient unit's are).
  Status set_properties(const std::string& name, const std::vector<UnitProperty>& properties);

 private:
  struct Bus;
  std::unique_ptr<Bus> bus_;
};

}  // namespace berth
