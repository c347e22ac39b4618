// Container records: what berthd must know of a container after a restart (its sandbox, image,
// the CRI config it was created from, its times, exit and pid), one file per container in the
// checksummed JSON format (version 1). Written at create and on every state change; removed by
// RemoveContainer. A record that fails to parse or match its checksum is quarantined.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/checksummed_json.h"
#include "berth/status.h"

namespace berth {

struct ContainerRecord {
  std::string id, sandbox_id;
  std::string name;
  uint32_t attempt = 0;
  std::string image_id;     // the image's config digest
  std::string image_ref;    // a repo digest of the image, else its id
  std::string stop_signal;  // the image's StopSignal (kept: the image may be removed while the container lives)
  std::string runtime_handler;
  std::string log_path;  // absolute; empty: no log file
  nlohmann::json
      config;     // the CreateContainer ContainerConfig: serialized protobuf, base64 (resources updated in place)
  int state = 0;  // CRI ContainerState: 0 created, 1 running, 2 exited, 3 unknown
  int64_t created_at = 0, started_at = 0, finished_at = 0;  // ns since the epoch
  int32_t exit_code = 0;
  std::string reason, message;
  int pid = 0;  // the container's init, on the host
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> additional_gids;
  // A container made from a checkpoint: the CRIU images its StartContainer restores (the runtime's
  // `restore` instead of `run`); empty once started, and for every other container.
  std::string restore_from;
};

std::string container_record_path(const std::string& dir, const std::string& id);
Status write_container_record(const std::string& dir, const ContainerRecord& record);
Result<ContainerRecord> read_container_record(const std::string& path);
Status remove_container_record(const std::string& dir, const std::string& id);

using LoadedContainerRecords = LoadedRecords<ContainerRecord>;

LoadedContainerRecords load_container_records(const std::string& dir, const std::string& quarantine_dir);

}  // namespace berth
