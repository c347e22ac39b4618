// Container records in the checksummed JSON record format (checksummed_json.h), version 1.
#include "berth/container_record.h"



#include "berth/checksummed_json.h"

namespace berth {

using nlohmann::json;

namespace {

constexpr int kRecordVersion = 1;

json to_json(const ContainerRecord& r) {
  return {{"version", kRecordVersion},
          {"id", r.id},
          {"sandbox_id", r.sandbox_id},
          {"name", r.name},
          {"attempt", r.attempt},
          {"image_id", r.image_id},
          {"image_ref", r.image_ref},
          {"stop_signal", r.stop_signal},
          {"runtime_handler", r.runtime_handler},
          {"log_path", r.log_path},
          {"config", r.config},
          {"state", r.state},
          {"created_at", r.created_at},
          {"started_at", r.started_at},
          {"finished_at", r.finished_at},
          {"exit_code", r.exit_code},
          {"reason", r.reason},
          {"message", r.message},
          {"pid", r.pid},
          {"user", {{"uid", r.uid}, {"gid", r.gid}, {"additional_gids", r.additional_gids}}}};
}

Result<ContainerRecord> record_from_json(const json& j) {
  RecordFields f;
  try {
    ContainerRecord r;
    r.id = f.at(j, "id").get<std::string>();
    r.sandbox_id = f.at(j, "sandbox_id").get<std::string>();
    r.name = f.at(j, "name").get<std::string>();
    r.attempt = f.integer<uint32_t>(j, "attempt");
    r.image_id = f.at(j, "image_id").get<std::string>();
    r.image_ref = f.at(j, "image_ref").get<std::string>();
    r.stop_signal = j.contains("stop_signal") ? f.at(j, "stop_signal").get<std::string>() : "";
    r.runtime_handler = f.at(j, "runtime_handler").get<std::string>();
    r.log_path = f.at(j, "log_path").get<std::string>();
    r.config = f.at(j, "config");
    r.state = f.integer<int>(j, "state");
    r.created_at = f.integer<int64_t>(j, "created_at");
    r.started_at = f.integer<int64_t>(j, "started_at");
    r.finished_at = f.integer<int64_t>(j, "finished_at");
    r.exit_code = f.integer<int32_t>(j, "exit_code");
    r.reason = f.at(j, "reason").get<std::string>();
    r.message = f.at(j, "message").get<std::string>();
    r.pid = f.integer<int>(j, "pid");
    const json& user = f.at(j, "user");
    r.uid = f.integer<uint32_t>(user, "uid", "user");
    r.gid = f.integer<uint32_t>(user, "gid", "user");
    r.additional_gids = f.integers<uint32_t>(user, "additional_gids", "user");
    return r;
  } catch (const json::exception& e) {
    return f.error(e);
  }
}

}  // namespace

std::string container_record_path(const std::string& dir, const std::string& id) { return record_path(dir, id); }

Status write_container_record(const std::string& dir, const ContainerRecord& r) {
  return write_checksummed_json(container_record_path(dir, r.id), to_json(r), "container record of " + r.id);
}

Result<ContainerRecord> read_container_record(const std::string& path) { return read_record(path, kRecordVersion, record_from_json, "container record"); }

Status remove_container_record(const std::string& dir, const std::string& id) { return remove_record(dir, id, "container record"); }

LoadedContainerRecords load_container_records(const std::string& dir, const std::string& quarantine_dir) {
  return load_records<ContainerRecord>(dir, quarantine_dir, kRecordVersion, record_from_json);
}

}  // namespace berth
