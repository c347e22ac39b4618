// The adjustments plugins return for one container, merged in plugin order as the reference
// implementation merges them: each field (or each key of a keyed field: an env name, a mount's
// destination, a device's path ...) belongs to the first plugin that sets or removes it, and a
// second plugin touching it is refused naming both. Every plugin sees the container as the
// plugins before it left it. A key written "-name" removes what it names.
#pragma once

#include <map>
#include <string>

#include "berth/status.h"
#include "nri/api.pb.h"

namespace berth::nri {

namespace api = ::nri::pkg::api::v1alpha1;

class AdjustmentMerger {
 public:
  explicit AdjustmentMerger(api::Container container) : container_(std::move(container)) {}

  // Adds `plugin`'s (its "NN-name") adjustment; FAILED_PRECONDITION naming both plugins and the
  // field on a conflict, nothing of the adjustment applied then.
  Status add(const std::string& plugin, const api::ContainerAdjustment& adjust);

  const api::ContainerAdjustment& merged() const { return merged_; }
  const api::Container& container() const { return container_; }
  // Which plugin set each field ("env FOO" -> "10-a"), for logs and ImageStatus-like views.
  const std::map<std::string, std::string>& owners() const { return owners_; }

 private:
  api::Container container_;
  api::ContainerAdjustment merged_;
  std::map<std::string, std::string> owners_;
};

// The owners in the API's terms (api::Field, per key for keyed fields), for validators.
api::OwningPlugins owning_plugins(const std::string& container_id, const std::map<std::string, std::string>& owners);

// Merges updates of one container's resources from several plugins with the same ownership
// rules; the owners map is shared by the caller over one event.
Status merge_resources(const std::string& plugin, const std::string& container_id, const api::LinuxResources& from,
                       api::LinuxResources& into, std::map<std::string, std::string>& owners);

}  // namespace berth::nri
