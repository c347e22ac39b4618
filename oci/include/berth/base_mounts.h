// The mounts every container's and every pause's OCI spec starts with, as containerd's defaults
// have them: /proc, the /dev tmpfs, /dev/pts, /sys and /dev/mqueue.
#pragma once

#include "berth/oci_spec.h"

namespace berth {

oci::Mount proc_mount();
oci::Mount dev_mount();
// `tty_group`: the devpts nodes belong to group 5 (tty), as containerd gives containers.
oci::Mount devpts_mount(bool tty_group);
oci::Mount sysfs_mount(bool read_only);
// The node's /sys bound read-only instead: for a user namespace of the pod's own in the node's
// network namespace, where the kernel refuses a sysfs mount (sysfs belongs to whoever owns the
// network namespace), as it does for an unprivileged user of the node.
oci::Mount host_sysfs_bind();
oci::Mount mqueue_mount();

}  // namespace berth
