// Sandbox checkpoints: everything needed to rebuild or clean up a sandbox after berthd restarts,
// as one JSON file per sandbox (format version 1) with a sha256 checksum over the canonical JSON
// of the other fields. Written atomically (and fsync'd) in phase "creating" before RunPodSandbox
// makes anything, so every resource a sandbox ever had is owned by a record; rewritten "ready"
// when RunPodSandbox succeeded and "stopped" when StopPodSandbox finished; removed by
// RemovePodSandbox as its last step.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "berth/checksummed_json.h"
#include "berth/status.h"
#include "berth/user_namespace.h"

namespace berth {

struct CheckpointPortMapping {
  std::string protocol;  // TCP, UDP, SCTP
  int32_t container_port = 0;
  int32_t host_port = 0;
  std::string host_ip;
};

// Where a sandbox is in its life, as recovery must know it: a "creating" one was cut short by a
// crash and is undone; "ready" and "stopped" ones are checked against the host.
enum class SandboxPhase { creating, ready, stopped };

struct SandboxCheckpoint {
  std::string id;
  SandboxPhase phase = SandboxPhase::creating;  // absent in older files: "ready"
  std::string name, namespace_, uid;
  uint32_t attempt = 0;
  std::string netns_path;  // empty for host-network pods
  bool host_network = false;
  bool privileged = false;                           // the sandbox's security context: its containers may be privileged
  int network_mode = 0, pid_mode = 0, ipc_mode = 0;  // CRI NamespaceMode values
  std::string cgroup_parent;
  std::string runtime_handler;
  std::string image_id;  // the sandbox image the pause runs from; empty for the embedded pause
  std::string hostname;
  std::string log_directory;
  std::vector<CheckpointPortMapping> port_mappings;
  std::map<std::string, std::string> labels, annotations;
  int64_t created_at = 0;  // ns since the epoch
  // The last UpdatePodSandboxResources applied to the pod's cgroup, as JSON text
  // ({"overhead": …, "resources": …}); empty when none.
  std::string resources;
  // A pod in a user namespace of its own (hostUsers: false): its pin (empty: the host's) and
  // mappings, which its containers and id-mapped mounts use.
  std::string userns_path;
  std::vector<IdMapping> uid_mappings, gid_mappings;
};

std::string checkpoint_path(const std::string& dir, const std::string& id);
// durable false for the phase updates after the first write: a crash keeps the page cache, and
// after a power cut nothing the phase speaks of still runs.
Status write_checkpoint(const std::string& dir, const SandboxCheckpoint& cp, bool durable = true);
Result<SandboxCheckpoint> read_checkpoint(const std::string& path);
Status remove_checkpoint(const std::string& dir, const std::string& id);

using LoadedCheckpoints = LoadedRecords<SandboxCheckpoint>;

// Reads every checkpoint in `dir`; one that does not parse or whose checksum does not match is
// moved to `quarantine_dir` (and reported), never deleted and never trusted.
LoadedCheckpoints load_checkpoints(const std::string& dir, const std::string& quarantine_dir);

}  // namespace berth
