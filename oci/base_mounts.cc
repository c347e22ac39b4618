// See base_mounts.h.
#include "berth/base_mounts.h"

namespace berth {

using nlohmann::json;

json proc_mount() {
  return {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}, {"options", {"nosuid", "noexec", "nodev"}}};
}

json dev_mount() {
  return {{"destination", "/dev"},
          {"type", "tmpfs"},
          {"source", "tmpfs"},
          {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}};
}

json devpts_mount(bool tty_group) {
  json options = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"};
  if (tty_group) options.push_back("gid=5");
  return {{"destination", "/dev/pts"}, {"type", "devpts"}, {"source", "devpts"}, {"options", options}};
}

json sysfs_mount(bool read_only) {
  return {{"destination", "/sys"},
          {"type", "sysfs"},
          {"source", "sysfs"},
          {"options", {"nosuid", "noexec", "nodev", read_only ? "ro" : "rw"}}};
}

json mqueue_mount() {
  return {{"destination", "/dev/mqueue"},
          {"type", "mqueue"},
          {"source", "mqueue"},
          {"options", {"nosuid", "noexec", "nodev"}}};
}

}  // namespace berth
