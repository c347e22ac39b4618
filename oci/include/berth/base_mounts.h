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
oci::Mount mqueue_mount();

}  // namespace berth
