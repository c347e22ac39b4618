// Completing CDI device nodes from the host; see host_device.h.
#include "host_device.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>

namespace berth::cdi {
namespace {

// "b", "c", "p", or "" for anything that is not a device node.
std::string node_type(mode_t mode) {
  if (S_ISBLK(mode)) return "b";
  if (S_ISCHR(mode)) return "c";
  if (S_ISFIFO(mode)) return "p";
  return "";
}

}  // namespace

Result<OciDeviceNode> oci_device_node(const CdiDeviceNode& node, uint32_t process_uid, uint32_t process_gid) {
  const std::string host = node.host_path.empty() ? node.path : node.host_path;
  const std::string what = "device node " + node.path + " (host " + host + ")";
  std::string type = node.type;
  int64_t major_nr = node.major, minor_nr = node.minor;
  struct stat st {};
  bool stat_ok = ::stat(host.c_str(), &st) == 0;
  int stat_errno = errno;
  std::string host_type = stat_ok ? node_type(st.st_mode) : "";
  // As the CDI reference: the host is asked when the type or a major number is missing.
  if (type.empty() || (major_nr == 0 && type != "p")) {
    if (!stat_ok) return errno_status(stat_errno, what + ": stat", Code::failed_precondition);
    if (host_type.empty()) return failed_precondition(what + ": not a device node on the host");
    std::string given = type == "u" ? "c" : type;  // "u" is an unbuffered character device
    if (!type.empty() && given != host_type)
      return failed_precondition(what + ": type '" + type + "' but the host node is of type '" + host_type + "'");
    if (type.empty()) type = host_type;
    if (major_nr == 0 && type != "p") {
      major_nr = static_cast<int64_t>(major(st.st_rdev));
      minor_nr = static_cast<int64_t>(minor(st.st_rdev));
    }
  }
  bool host_node = stat_ok && !host_type.empty();
  OciDeviceNode out;
  out.device = {.type = type, .path = node.path, .major = major_nr, .minor = minor_nr};
  if (node.file_mode)
    out.device.file_mode = *node.file_mode;
  else if (host_node)
    out.device.file_mode = static_cast<uint32_t>(st.st_mode & 07777);
  if (node.uid)
    out.device.uid = *node.uid;
  else if (process_uid > 0)
    out.device.uid = process_uid;
  else if (host_node)
    out.device.uid = static_cast<uint32_t>(st.st_uid);
  if (node.gid)
    out.device.gid = *node.gid;
  else if (process_gid > 0)
    out.device.gid = process_gid;
  else if (host_node)
    out.device.gid = static_cast<uint32_t>(st.st_gid);
  // "none": the node without cgroup access, so no allow rule (the spec's deny-all stands).
  std::string access = node.permissions.empty() ? "rwm" : node.permissions == "none" ? "" : node.permissions;
  if ((type == "b" || type == "c" || type == "u") && !access.empty())
    out.rule = oci::DeviceRule{
        .allow = true, .type = type == "u" ? "c" : type, .major = major_nr, .minor = minor_nr, .access = access};
  return out;
}

}  // namespace berth::cdi
