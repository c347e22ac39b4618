// Device nodes are stat'ed on the host (never created by berth); a directory host path maps
// each device node below it to the same relative place under the container path.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>

#include "berth/container_devices.h"

namespace berth {

namespace fs = std::filesystem;

namespace {

bool node_from_stat(const struct stat& st, const std::string& container_path, const std::string& access,
                    OciDevice& out) {
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) return false;
  out = OciDevice{.path = container_path,
                  .type = S_ISBLK(st.st_mode) ? 'b' : 'c',
                  .major = static_cast<int64_t>(major(st.st_rdev)),
                  .minor = static_cast<int64_t>(minor(st.st_rdev)),
                  .file_mode = static_cast<uint32_t>(st.st_mode & 07777),
                  .uid = st.st_uid,
                  .gid = st.st_gid,
                  .access = access};
  return true;
}

}  // namespace

Result<std::vector<OciDevice>> resolve_devices(const std::vector<DeviceRequest>& devices) {
  std::vector<OciDevice> out;
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceRequest& d = devices[i];
    const std::string field = "config.devices[" + std::to_string(i) + "]";
    std::string access = d.permissions.empty() ? "rwm" : d.permissions;
    if (access.find_first_not_of("rwm") != std::string::npos)
      return invalid_argument(field + ".permissions: '" + d.permissions + "' may only contain r, w and m");
    std::string target = d.container_path.empty() ? d.host_path : d.container_path;
    if (target.empty() || target[0] != '/')
      return invalid_argument(field + ".container_path: '" + target + "' is not an absolute path");
    struct stat st {};
    if (::stat(d.host_path.c_str(), &st) != 0)
      return errno_status(errno, field + ".host_path: " + d.host_path, Code::invalid_argument);
    OciDevice dev;
    if (node_from_stat(st, target, access, dev)) {
      out.push_back(dev);
      continue;
    }
    if (!S_ISDIR(st.st_mode))
      return invalid_argument(field + ".host_path: " + d.host_path + " is not a device node or a directory");
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(d.host_path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      struct stat est {};
      if (::lstat(it->path().c_str(), &est) != 0) continue;
      std::string rel = it->path().lexically_relative(d.host_path).string();
      if (node_from_stat(est, target + "/" + rel, access, dev)) out.push_back(dev);
    }
    if (ec) return invalid_argument(field + ".host_path: " + d.host_path + ": " + ec.message());
  }
  return out;
}

Result<std::vector<OciDevice>> host_devices(const std::string& dev_dir) {
  std::vector<OciDevice> out;
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(dev_dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string rel = it->path().lexically_relative(dev_dir).string();
    // Pseudo-terminals and the shm and mqueue mounts belong to the container's own /dev.
    if (rel == "pts" || rel == "shm" || rel == "mqueue" || rel == "console" || rel.rfind("pts/", 0) == 0) {
      if (std::error_code dir_ec; it->is_directory(dir_ec)) it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    OciDevice dev;
    if (node_from_stat(st, "/dev/" + rel, "rwm", dev)) out.push_back(dev);
  }
  if (ec) return errno_status(ec.value(), "list host devices in " + dev_dir);
  return out;
}

}  // namespace berth
