// See base_mounts.h.
#include "berth/base_mounts.h"

namespace berth {

oci::Mount proc_mount() {
  return {.destination = "/proc", .type = "proc", .source = "proc", .options = {"nosuid", "noexec", "nodev"}};
}

oci::Mount dev_mount() {
  return {.destination = "/dev",
          .type = "tmpfs",
          .source = "tmpfs",
          .options = {"nosuid", "strictatime", "mode=755", "size=65536k"}};
}

oci::Mount devpts_mount(bool tty_group) {
  oci::Mount m{.destination = "/dev/pts",
               .type = "devpts",
               .source = "devpts",
               .options = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}};
  if (tty_group) m.options.push_back("gid=5");
  return m;
}

oci::Mount sysfs_mount(bool read_only) {
  return {.destination = "/sys",
          .type = "sysfs",
          .source = "sysfs",
          .options = {"nosuid", "noexec", "nodev", read_only ? "ro" : "rw"}};
}

oci::Mount host_sysfs_bind() {
  return {
      .destination = "/sys", .type = "bind", .source = "/sys", .options = {"rbind", "nosuid", "noexec", "nodev", "ro"}};
}

oci::Mount mqueue_mount() {
  return {.destination = "/dev/mqueue", .type = "mqueue", .source = "mqueue", .options = {"nosuid", "noexec", "nodev"}};
}

}  // namespace berth
