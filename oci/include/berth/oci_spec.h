// The OCI runtime spec (config.json) as types: the parts berth writes and reads, with one JSON
// writer and one reader. Every builder (containers, the pause, CDI edits) fills these and every
// reader (recovery, exec, the exec helper, the pause launcher, resource updates) reads them, so a
// key is spelled once, in oci_spec_read.cc and oci_spec_write.cc. Members a level does not model
// are kept in its `unknown` object and written back, so a spec read and written again (one a
// runtime or a hook wrote) loses nothing (the id mappings, three numbers each, are the one level
// without). Written as Go's runtime-spec marshals it: a member with Go's `omitempty` is left out
// when empty (an optional that is unset, an empty list, string or map, false, 0), the others
// always written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth::oci {

struct User {
  uint32_t uid = 0, gid = 0;
  std::optional<uint32_t> umask;
  std::vector<uint32_t> additional_gids;
  nlohmann::json unknown = nlohmann::json::object();  // username, ...
};

// Present but empty is not absent: a process without a capabilities object keeps what the runtime
// gives by default, one with empty sets has none.
struct Capabilities {
  std::vector<std::string> bounding, effective, inheritable, permitted, ambient;
  nlohmann::json unknown = nlohmann::json::object();
};

struct Rlimit {
  std::string type;  // "RLIMIT_NOFILE"
  uint64_t hard = 0, soft = 0;
  nlohmann::json unknown = nlohmann::json::object();
};

struct Process {
  bool terminal = false;
  User user;
  std::vector<std::string> args, env;
  std::string cwd;
  std::optional<Capabilities> capabilities;
  std::vector<Rlimit> rlimits;
  bool no_new_privileges = false;
  std::string apparmor_profile, selinux_label;
  std::optional<int> oom_score_adj;
  nlohmann::json unknown = nlohmann::json::object();  // consoleSize, ioPriority, scheduler, ...
};

struct Root {
  std::string path;
  bool readonly = false;
  nlohmann::json unknown = nlohmann::json::object();
};

struct Mount {
  std::string destination, type, source;
  std::vector<std::string> options;
  std::vector<IdMapping> uid_mappings, gid_mappings;  // an id-mapped mount
  nlohmann::json unknown = nlohmann::json::object();
};

struct Hook {
  std::string path;
  std::vector<std::string> args, env;
  std::optional<int64_t> timeout;  // seconds (Go int)
  nlohmann::json unknown = nlohmann::json::object();
};

// By the spec's names: prestart, createRuntime, createContainer, startContainer, poststart,
// poststop. An empty list is left out.
using Hooks = std::map<std::string, std::vector<Hook>>;

struct Namespace {
  std::string type;  // "network", "pid", ...
  std::string path;  // joined when set, new otherwise
  nlohmann::json unknown = nlohmann::json::object();
};

struct Device {
  std::string type, path;  // "c", "b", "u", "p"
  int64_t major = 0, minor = 0;
  std::optional<uint32_t> file_mode, uid, gid;
  nlohmann::json unknown = nlohmann::json::object();
};

struct DeviceRule {
  bool allow = false;
  std::string type;  // "" is every type ("a")
  std::optional<int64_t> major, minor;
  std::string access;
  nlohmann::json unknown = nlohmann::json::object();
};

struct CpuResources {
  std::optional<uint64_t> shares, period;
  std::optional<int64_t> quota;
  std::string cpus, mems;
  nlohmann::json unknown = nlohmann::json::object();  // realtime*, idle, burst
};

struct MemoryResources {
  std::optional<int64_t> limit, swap;
  nlohmann::json unknown = nlohmann::json::object();  // reservation, swappiness, ...
};

struct HugepageLimit {
  std::string page_size;  // "2MB"
  uint64_t limit = 0;
  nlohmann::json unknown = nlohmann::json::object();
};

struct Resources {
  std::vector<DeviceRule> devices;
  std::optional<CpuResources> cpu;
  std::optional<MemoryResources> memory;
  std::vector<HugepageLimit> hugepage_limits;
  std::map<std::string, std::string> unified;
  nlohmann::json unknown = nlohmann::json::object();  // pids, blockIO, network, rdma
};

struct Linux {
  std::vector<IdMapping> uid_mappings, gid_mappings;
  std::map<std::string, std::string> sysctl;
  std::optional<Resources> resources;
  std::string cgroups_path;
  std::vector<Namespace> namespaces;
  std::vector<Device> devices;
  // Kept as JSON: it goes as it is to the seccomp compiler (oci/seccomp_filter.h) and comes from
  // berth's profile or a Localhost file.
  std::optional<nlohmann::json> seccomp;
  std::string rootfs_propagation;
  std::vector<std::string> masked_paths, readonly_paths;
  nlohmann::json unknown = nlohmann::json::object();  // mountLabel, intelRdt, personality, ...
};

struct Spec {
  std::string oci_version;
  std::optional<Process> process;
  std::optional<Root> root;
  std::string hostname;
  std::vector<Mount> mounts;
  Hooks hooks;
  std::map<std::string, std::string> annotations;
  std::optional<Linux> linux;
  nlohmann::json unknown = nlohmann::json::object();  // domainname, solaris, windows, vm, ...
};

nlohmann::json to_json(const Spec& spec);
nlohmann::json to_json(const Process& process);      // what `runc exec --process` reads
nlohmann::json to_json(const Resources& resources);  // what `runc update -r` reads

// A member of the wrong type, an integer out of its range or a string list holding something
// else is INVALID_ARGUMENT naming the field below `name` ("config.json: field
// 'linux.namespaces[2].type': missing"); never an exception.
Result<Spec> spec_from_json(const nlohmann::json& spec, const std::string& name = "config.json");

// A bundle's config.json read from disk; INTERNAL naming the file when it does not read or parse
// (berth wrote it: a damaged file, not a caller's mistake).
Result<Spec> read_spec_file(const std::string& path);

// The name of the first member an `unknown` object holds, "" when it holds none: what a reader
// that applies only the modelled members (the pause launcher, the exec helper) refuses.
std::string first_unknown(const nlohmann::json& unknown);

}  // namespace berth::oci
