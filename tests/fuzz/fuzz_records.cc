// Fuzz target: the durable records berthd trusts after a restart (checkpoint/): sandbox checkpoints
// and container records read from disk, through the checksummed JSON format. The first byte picks
// the record kind and whether the file gets a correct checksum (so the fuzzer reaches the fields
// behind it); the rest is the file. A record that reads must write and read back the same.
#include <filesystem>

#include "berth/checksummed_json.h"
#include "berth/container_record.h"
#include "berth/sandbox_checkpoint.h"
#include "fuzz_support.h"

using namespace berth;
using nlohmann::json;

namespace {

// The file as berth would have written it: the object with its checksum set.
std::string checksummed(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return text;
  j.erase("checksum");
  j["checksum"] = "sha256:" + sha256_hex(j.dump());
  return j.dump(2);
}

bool same(const SandboxCheckpoint& a, const SandboxCheckpoint& b) {
  bool ports = a.port_mappings.size() == b.port_mappings.size();
  for (size_t i = 0; ports && i < a.port_mappings.size(); ++i) {
    const auto &x = a.port_mappings[i], &y = b.port_mappings[i];
    ports = x.protocol == y.protocol && x.container_port == y.container_port && x.host_port == y.host_port &&
            x.host_ip == y.host_ip;
  }
  return ports && a.id == b.id && a.phase == b.phase && a.name == b.name && a.namespace_ == b.namespace_ &&
         a.uid == b.uid && a.attempt == b.attempt && a.netns_path == b.netns_path && a.host_network == b.host_network &&
         a.privileged == b.privileged && a.network_mode == b.network_mode && a.pid_mode == b.pid_mode &&
         a.ipc_mode == b.ipc_mode && a.cgroup_parent == b.cgroup_parent && a.runtime_handler == b.runtime_handler &&
         a.image_id == b.image_id && a.hostname == b.hostname && a.log_directory == b.log_directory &&
         a.labels == b.labels && a.annotations == b.annotations && a.created_at == b.created_at;
}

bool same(const ContainerRecord& a, const ContainerRecord& b) {
  return a.id == b.id && a.sandbox_id == b.sandbox_id && a.name == b.name && a.attempt == b.attempt &&
         a.image_id == b.image_id && a.image_ref == b.image_ref && a.stop_signal == b.stop_signal &&
         a.runtime_handler == b.runtime_handler && a.log_path == b.log_path && a.config == b.config &&
         a.state == b.state && a.created_at == b.created_at && a.started_at == b.started_at &&
         a.finished_at == b.finished_at && a.exit_code == b.exit_code && a.reason == b.reason &&
         a.message == b.message && a.pid == b.pid && a.uid == b.uid && a.gid == b.gid &&
         a.additional_gids == b.additional_gids;
}

// Reads `file` as a record, writes what it read back (under a fixed id: ids from a file never name
// where berth writes) and reads that again; then the directory loader over the same file.
template <class Record, class Read, class Write, class Load>
void round_trip(const std::string& file, Read read, Write write, Load load) {
  const std::string dir = fuzz::scratch_dir() + "/records";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/input.json";
  fuzz::write_file(path, file);
  Result<Record> r = read(path);
  if (r.ok()) {
    Record rec = *r;
    rec.id = "rewritten";
    FUZZ_CHECK(write(dir, rec).ok());
    Result<Record> back = read(dir + "/rewritten.json");
    FUZZ_CHECK(back.ok() && same(*back, rec));
  } else {
    FUZZ_CHECK(r.status().code() == Code::invalid_argument);
  }
  auto loaded = load(dir, dir + "/quarantine");
  FUZZ_CHECK(loaded.valid.size() + loaded.quarantined.size() == (r.ok() ? 2u : 1u));
}

}  // namespace

BERTH_FUZZ_TARGET(records) {
  fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string text(in.rest());
  std::string file = mode & 2 ? checksummed(text) : text;
  if (mode & 1) {
    round_trip<ContainerRecord>(file, read_container_record, write_container_record, load_container_records);
  } else {
    round_trip<SandboxCheckpoint>(
        file, read_checkpoint,
        [](const std::string& d, const SandboxCheckpoint& c) { return write_checkpoint(d, c, false); },
        load_checkpoints);
  }
  return 0;
}
