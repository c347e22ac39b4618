// A container's capability set and its masked and read-only /proc and /sys paths, from its CRI
// security context; the defaults are the ones containerd and CRI-O apply, so workloads behave the
// same on berth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct CapabilityRequest {
  std::vector<std::string> add;  // names with or without CAP_, any case, or "ALL"
  std::vector<std::string> drop;
  std::vector<std::string> ambient;  // must also end up in the set
  bool privileged = false;
  // What may be granted (a CapBnd mask); unset: berthd's own bounding set (own_privileges.h).
  std::optional<uint64_t> bounding;
};

struct CapabilitySet {
  std::vector<std::string> caps;  // "CAP_…", sorted by capability number: bounding/effective/permitted
  std::vector<std::string> ambient;
};

// The default set when nothing is added or dropped (14 capabilities, no CAP_SYS_ADMIN).
const std::vector<std::string>& default_capabilities();

// Unknown names are INVALID_ARGUMENT naming the field and the name (checked with libcap), as is
// adding a capability outside the bounding set; ALL and privileged mean the bounding set.
Result<CapabilitySet> resolve_capabilities(const CapabilityRequest& request);

// The bit mask of an OCI capability list ("CAP_…" names); an unknown name is INVALID_ARGUMENT
// naming `field`. Runtimes skip names their kernel lacks; a spec berth wrote has none.
Result<uint64_t> capability_mask(const std::vector<std::string>& names, const std::string& field);

const std::vector<std::string>& default_masked_paths();
const std::vector<std::string>& default_readonly_paths();

}  // namespace berth
