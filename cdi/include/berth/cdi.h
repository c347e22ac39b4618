// The Container Device Interface (CDI) as containerd 2.x and CRI-O implement it, for a CRI
// ContainerConfig's CDI_devices ("vendor.example/class=name") and the cdi.k8s.io/* annotations
// device plugins still write (cdi_annotation_devices): spec files (*.json, *.yaml, *.yml,
// cdiVersion 0.3.0 to 0.8.0) in the spec dirs are validated, a device name resolves to its spec's
// container edits then its own, and the edits are applied to an OCI runtime spec. Nothing is
// persisted; the registry holds what it last read of the dirs, in memory.
//
// Precedence (CDI's rule): the later a dir is in the list the higher its priority, so a device in
// /var/run/cdi replaces the same device in /etc/cdi. Two files of one dir defining the same device
// make that device unavailable (neither is used). A file that fails to parse or validate makes only
// its own devices unavailable; resolving one of them says which file and why. So does a file that a
// user other than root can write, or that sits in a dir they can write: it is skipped unread, with
// a warning (its edits would be run as root on the node).
//
// Changes are seen without an inotify watch: each resolve() lists the dirs and stats their spec
// files (a readdir and a few stat calls per CreateContainer that asks for CDI devices), and
// re-reads a file whose device, inode, size, mtime or ctime changed or whose timestamps are too
// recent to trust (a rewrite of the same size within one timestamp tick). That needs no thread,
// no watch descriptors (fs.inotify.max_user_watches is shared with kubelet and every pod) and no
// event ordering, works for dirs created later, and is exact for files replaced by rename,
// rewritten in place, added or removed; an unchanged file is not read again.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/oci_spec.h"
#include "berth/status.h"

namespace berth {

// A device node to create in the container (CDI deviceNodes[]). Values left out are taken from
// the host node when the edits are applied.
struct CdiDeviceNode {
  std::string path;       // in the container
  std::string host_path;  // "" means `path`
  std::string type;       // "b", "c", "u", "p", or "" (the host node's)
  int64_t major = 0;      // 0: the host node's (as the CDI reference: no device node has major 0)
  int64_t minor = 0;
  std::optional<uint32_t> file_mode, uid, gid;
  std::string permissions;  // cgroup access: a subset of "rwm"; "" is "rwm"; "none" adds no rule
};

struct CdiMount {
  std::string host_path, container_path, type;
  std::vector<std::string> options;
};

struct CdiHook {
  std::string hook_name;  // prestart, createRuntime, createContainer, startContainer, poststart, poststop
  std::string path;
  std::vector<std::string> args, env;
  std::optional<int64_t> timeout;  // seconds, > 0
};

struct CdiContainerEdits {
  std::vector<std::string> env;  // "NAME=value"
  std::vector<CdiDeviceNode> device_nodes;
  std::vector<CdiMount> mounts;
  std::vector<CdiHook> hooks;
  std::vector<uint32_t> additional_gids;
};

// Edits in the order they are applied, each with where it came from ("/etc/cdi/gpu.yaml" for a
// spec's own edits, "/etc/cdi/gpu.yaml: device nvidia.com/gpu=0" for a device's) so an error
// while applying names its source.
struct CdiEdits {
  struct Block {
    std::string origin;
    CdiContainerEdits edits;
  };
  std::vector<Block> blocks;
};

// INVALID_ARGUMENT unless `name` is a fully qualified CDI device name "vendor/class=name" (the
// request check can call this before any spec is read).
Status check_cdi_device_name(const std::string& name);

// The devices a container's annotations ask for, as the CDI reference reads them: every key that
// starts with "cdi.k8s.io/" holds a comma-separated list of fully qualified names. In key order;
// INVALID_ARGUMENT naming the key for a name that is not qualified (never dropped).
Result<std::vector<std::string>> cdi_annotation_devices(const std::map<std::string, std::string>& annotations);

// The CDI spec dirs of the registry. Thread-safe: resolve() holds a lock while it re-scans.
class CdiRegistry {
 public:
  static std::vector<std::string> default_dirs() { return {"/etc/cdi", "/var/run/cdi"}; }

  // Lowest priority first. A dir that does not exist (yet) holds no specs.
  explicit CdiRegistry(std::vector<std::string> dirs = default_dirs());
  ~CdiRegistry();
  CdiRegistry(const CdiRegistry&) = delete;
  CdiRegistry& operator=(const CdiRegistry&) = delete;

  // Re-scans the dirs, then resolves each name (a repeated name counts once): for each device,
  // its spec's edits (the first time a device of that spec is named) then its own. Errors, for
  // the first name that fails:
  //   INVALID_ARGUMENT  "CDI device 'x': not a fully qualified name ..."
  //   NOT_FOUND         "CDI device 'vendor.example/class=x': unknown (known: a, b)", followed by
  //                     "; spec files that failed to load: <file>: <why>" when there are such
  //   FAILED_PRECONDITION "CDI device 'v/c=x': invalid spec file <file>: <field>: <why>", or
  //                     "... defined by both <file> and <file> in one dir, so by neither"
  Result<CdiEdits> resolve(const std::vector<std::string>& names);

  // The devices resolve() would find now, sorted (after a re-scan).
  std::vector<std::string> known_devices();

  // Other dirs (a reload's cdi_spec_dirs): the next resolve() re-scans them.
  void set_dirs(std::vector<std::string> dirs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Applies `edits` to an OCI runtime spec (the JSON berth builds: process, mounts, linux, hooks):
//   env             appended to process.env, replacing a variable of the same name;
//   device nodes    linux.devices (replacing one with the same path) with type, major, minor,
//                   fileMode, uid and gid filled from stat() of the host path when not given
//                   (uid/gid: the process user's when it is not root, as the CDI reference does),
//                   and a linux.resources.devices allow rule for a "b" or "c" ("u") node;
//   mounts          appended to mounts (replacing one with the same destination), then mounts
//                   stably sorted by depth so a parent is mounted before its children (as the
//                   CDI reference does);
//   hooks           appended to hooks.<hookName>;
//   additional GIDs appended to process.user.additionalGids (0 and ones present skipped).
// On error the spec is left as it was; the message names the edits' origin.
Status apply_cdi_edits(oci::Spec& oci_spec, const CdiEdits& edits);

}  // namespace berth
