// The mounts every container's and every pause's OCI spec starts with, as containerd's defaults
// have them: /proc, the /dev tmpfs, /dev/pts, /sys and /dev/mqueue.
#pragma once

#include <nlohmann/json.hpp>

namespace berth {

nlohmann::json proc_mount();
nlohmann::json dev_mount();
// `tty_group`: the devpts nodes belong to group 5 (tty), as containerd gives containers.
nlohmann::json devpts_mount(bool tty_group);
nlohmann::json sysfs_mount(bool read_only);
nlohmann::json mqueue_mount();

}  // namespace berth
