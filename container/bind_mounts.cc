// CRI Mount -> OCI bind mount. Propagation other than private needs the host mount to propagate
// too (a bidirectional mount on a private host mount would silently not propagate), so it is
// checked against mountinfo, as kubelet's users expect from containerd and CRI-O.
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <sstream>

#include "berth/container_mounts.h"

namespace berth {

namespace {

// mountinfo's octal escapes (\040 for space etc.) undone.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    bool octal = s[i] == '\\' && i + 3 < s.size();
    for (size_t j = 1; octal && j <= 3; ++j) octal = s[i + j] >= '0' && s[i + j] <= '7';
    if (octal) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool path_under(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.rfind(dir, 0) == 0 && path.size() > dir.size() && path[dir.size()] == '/');
}

namespace {

// The mount holding `path` (its mount point and propagation), from mountinfo text.
std::pair<std::string, std::string> holding_mount(const std::string& path, const std::string& mountinfo) {
  std::istringstream in(mountinfo);
  std::string line, best_point, best_prop = "private";
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, devno, root, point;
    if (!(f >> id >> parent >> devno >> root >> point)) continue;
    point = unescape(point);
    std::string opts, field, prop = "private";
    f >> opts;
    while (f >> field && field != "-") {
      if (field.rfind("shared:", 0) == 0)
        prop = "shared";
      else if (field.rfind("master:", 0) == 0 && prop != "shared")
        prop = "slave";
    }
    // Later lines for the same point are mounts stacked on top: they win.
    if (path_under(path, point) && point.size() >= best_point.size()) {
      best_point = point;
      best_prop = prop;
    }
  }
  return {best_point, best_prop};
}

}  // namespace

std::string mount_propagation_of(const std::string& path, const std::string& mountinfo) {
  return holding_mount(path, mountinfo).second;
}

bool is_private_mount_point(const std::string& dir, const std::string& mountinfo) {
  auto [point, propagation] = holding_mount(dir, mountinfo);
  return point == dir && propagation == "private";
}

namespace {

// An id-mapped volume is a copy berthd attaches on the host (runc 1.1 cannot make one), so it
// cannot follow the host's propagation: only private ones are taken.
Status check_mount_id_mappings(const MountRequest& m, const std::string& field, const MountPolicy& policy) {
  if (m.uid_mappings.empty()) return invalid_argument(field + ".uidMappings: must be given with gidMappings");
  if (m.gid_mappings.empty()) return invalid_argument(field + ".gidMappings: must be given with uidMappings");
  if (!policy.idmapped_mounts)
    return invalid_argument(
        field + ".uidMappings: id-mapped mounts are not supported on this host (needs Linux 5.12+ for mount_setattr)");
  if (Status s = validate_id_mappings(m.uid_mappings, field + ".uidMappings"); !s.ok()) return s;
  if (Status s = validate_id_mappings(m.gid_mappings, field + ".gidMappings"); !s.ok()) return s;
  if (m.propagation != MountPropagation::private_)
    return invalid_argument(field + ".propagation: an id-mapped mount needs private propagation");
  return ok_status();
}

}  // namespace

Result<std::vector<OciMount>> resolve_mounts(const std::vector<MountRequest>& mounts, const std::string& mountinfo,
                                             const MountPolicy& policy) {
  std::vector<OciMount> out;
  for (size_t i = 0; i < mounts.size(); ++i) {
    const MountRequest& m = mounts[i];
    const std::string field = "config.mounts[" + std::to_string(i) + "]";
    if (m.container_path.empty() || m.container_path[0] != '/')
      return invalid_argument(field + ".container_path: '" + m.container_path + "' is not an absolute path");
    const bool idmapped = !m.uid_mappings.empty() || !m.gid_mappings.empty();
    if (idmapped) {
      if (Status s = check_mount_id_mappings(m, field, policy); !s.ok()) return s;
    }
    if (m.has_image) {
      // Mounted with the pod's own mappings, as its rootfs is: a request's must be those.
      if (idmapped && policy.pod_uid_mappings.empty())
        return invalid_argument(field +
                                ".uidMappings: the pod has no user namespace of its own to map an image volume into");
      if (idmapped && (m.uid_mappings != policy.pod_uid_mappings || m.gid_mappings != policy.pod_gid_mappings))
        return invalid_argument(field + ".uidMappings: an image volume is mapped as its pod's user namespace is (" +
                                id_map_text(policy.pod_uid_mappings) + "), not otherwise");
      if (m.image_source.empty()) return invalid_argument(field + ".image: image volumes are not supported here");
      // Always read-only, whatever the request says: the layers are shared with other users.
      out.push_back({.destination = m.container_path,
                     .type = "bind",
                     .source = m.image_source,
                     .options = {"rbind", "rprivate", "ro", "nosuid", "nodev"}});
      continue;
    }
    if (m.host_path.empty() || m.host_path[0] != '/')
      return invalid_argument(field + ".host_path: '" + m.host_path + "' is not an absolute path");
    char resolved[PATH_MAX];
    if (!::realpath(m.host_path.c_str(), resolved))
      return errno_status(errno, field + ".host_path: " + m.host_path, Code::invalid_argument);
    OciMount o{
        .destination = m.container_path, .type = "bind", .source = m.host_path, .options = {"rbind"}, .field = field};
    if (m.recursive_read_only) {
      // Never downgraded to a plain read-only mount: a request that cannot be honoured is refused.
      if (!m.readonly) return invalid_argument(field + ".recursive_read_only: needs readonly");
      if (m.propagation != MountPropagation::private_)
        return invalid_argument(field + ".recursive_read_only: needs private propagation");
      switch (policy.recursive_read_only) {
        case RecursiveReadOnly::unsupported:
          return invalid_argument(
              field + ".recursive_read_only: not supported on this host (needs Linux 5.12+ for mount_setattr)");
        case RecursiveReadOnly::runtime_option: o.options.push_back("rro"); break;
        case RecursiveReadOnly::host_prepared: o.prepared_read_only = true; break;
      }
    }
    if (idmapped) {
      o.uid_mappings = m.uid_mappings;
      o.gid_mappings = m.gid_mappings;
    }
    if (o.prepared_read_only || idmapped) {
      o.prepared_from = resolved;
      o.source = policy.prepared_dir + "/" + std::to_string(i);
    }
    switch (m.propagation) {
      case MountPropagation::private_: o.options.push_back("rprivate"); break;
      case MountPropagation::host_to_container: {
        std::string p = mount_propagation_of(resolved, mountinfo);
        if (p == "private")
          return failed_precondition(field + ".propagation: host-to-container needs " + m.host_path +
                                     " on a shared or slave mount, but its mount is private");
        o.options.push_back("rslave");
        break;
      }
      case MountPropagation::bidirectional: {
        std::string p = mount_propagation_of(resolved, mountinfo);
        if (p != "shared")
          return failed_precondition(field + ".propagation: bidirectional needs " + m.host_path +
                                     " on a shared mount, but its mount is " + p);
        o.options.push_back("rshared");
        break;
      }
    }
    if (m.readonly) o.options.push_back("ro");
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace berth
