// A CDI device node completed from the host node it names, as it goes into an OCI spec's
// linux.devices, with the cgroup rule that lets the container use it.
#pragma once

#include <optional>

#include "berth/cdi.h"

namespace berth::cdi {

struct OciDeviceNode {
  oci::Device device;                   // a linux.devices entry
  std::optional<oci::DeviceRule> rule;  // a linux.resources.devices allow rule, for b, c and u nodes
};

// Type, major and minor come from stat() of the host path (hostPath, or path when that is empty)
// unless given; stat() must then succeed and find a device node (or FIFO) of the type given, else
// FAILED_PRECONDITION naming the node and the host path. fileMode comes from the host node when
// not given; uid and gid from `process_uid`/`process_gid` when those are not root (the CDI
// reference's rule: the container's user owns the node), else from the host node. Symlinks are
// followed, as for CRI devices (container/devices.cc).
Result<OciDeviceNode> oci_device_node(const CdiDeviceNode& node, uint32_t process_uid, uint32_t process_gid);

}  // namespace berth::cdi
