// A container's device nodes from its CRI devices (a device node, or a directory of them), and the
// device cgroup rules that let the container use them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct DeviceRequest {
  std::string container_path;
  std::string host_path;
  std::string permissions;  // any of "rwm"; empty means "rwm"
};

struct OciDevice {
  std::string path;  // in the container
  char type = 'c';   // 'c' or 'b'
  int64_t major = 0;
  int64_t minor = 0;
  uint32_t file_mode = 0;  // permission bits
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string access;  // cgroup rule access, "rwm" subset
};

// Errors name config.devices[i] and the reason (missing node, not a device, bad permissions).
Result<std::vector<OciDevice>> resolve_devices(const std::vector<DeviceRequest>& devices);

// Every device node under /dev of the host, for privileged containers.
Result<std::vector<OciDevice>> host_devices(const std::string& dev_dir = "/dev");

}  // namespace berth
