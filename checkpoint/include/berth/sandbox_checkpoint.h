// Sandbox checkpoints: everything needed to rebuild or clean up a sandbox after berthd restarts,
// as one JSON file per sandbox (format version 1) with a sha256 checksum over the canonical JSON
// of the other fields. Written atomically before the pause starts; removed by RemovePodSandbox.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "berth/checksummed_json.h"
#include "berth/status.h"

namespace berth {

struct CheckpointPortMapping {
  std::string protocol;  // TCP, UDP, SCTP
  int32_t container_port = 0;
  int32_t host_port = 0;
  std::string host_ip;
};

struct SandboxCheckpoint {
  std::string id;
  std::string name, namespace_, uid;
  uint32_t attempt = 0;
  std::string netns_path;  // empty for host-network pods
  bool host_network = false;
  bool privileged = false;  // the sandbox's security context: its containers may be privileged
  int network_mode = 0, pid_mode = 0, ipc_mode = 0;  // CRI NamespaceMode values
  std::string cgroup_parent;
  std::string runtime_handler;
  std::string image_id;  // the sandbox image the pause runs from; empty for the embedded pause
  std::string hostname;
  std::string log_directory;
  std::vector<CheckpointPortMapping> port_mappings;
  std::map<std::string, std::string> labels, annotations;
  int64_t created_at = 0;  // ns since the epoch
};

std::string checkpoint_path(const std::string& dir, const std::string& id);
Status write_checkpoint(const std::string& dir, const SandboxCheckpoint& cp);
Result<SandboxCheckpoint> read_checkpoint(const std::string& path);
Status remove_checkpoint(const std::string& dir, const std::string& id);

using LoadedCheckpoints = LoadedRecords<SandboxCheckpoint>;

// Reads every checkpoint in `dir`; one that does not parse or whose checksum does not match is
// moved to `quarantine_dir` (and reported), never deleted and never trusted.
LoadedCheckpoints load_checkpoints(const std::string& dir, const std::string& quarantine_dir);

}  // namespace berth
