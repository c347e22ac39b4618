// Container records in the checksummed JSON record format (checksummed_json.h), version 1.
#include "berth/container_record.h"

#include "berth/checksummed_json.h"
#include "berth/json_fields.h"

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
          {"restore_from", r.restore_from},
          {"user", {{"uid", r.uid}, {"gid", r.gid}, {"additional_gids", r.additional_gids}}}};
}

Result<ContainerRecord> record_from_json(const json& j) {
  JsonFields f(j);
  ContainerRecord r;
  r.id = f.required_string("id");
  r.sandbox_id = f.required_string("sandbox_id");
  r.name = f.required_string("name");
  r.attempt = f.required_integer<uint32_t>("attempt");
  r.image_id = f.required_string("image_id");
  r.image_ref = f.required_string("image_ref");
  r.stop_signal = f.string("stop_signal");
  r.runtime_handler = f.required_string("runtime_handler");
  r.log_path = f.required_string("log_path");
  if (const json* config = f.required("config")) r.config = *config;
  r.state = f.required_integer<int>("state");
  r.created_at = f.required_integer<int64_t>("created_at");
  r.started_at = f.required_integer<int64_t>("started_at");
  r.finished_at = f.required_integer<int64_t>("finished_at");
  r.exit_code = f.required_integer<int32_t>("exit_code");
  r.reason = f.required_string("reason");
  r.message = f.required_string("message");
  r.pid = f.required_integer<int>("pid");
  r.restore_from = f.string("restore_from");  // absent in records written before checkpoints
  if (const json* user = f.required_object("user")) {
    JsonFields u = f.nested(*user, "user");
    r.uid = u.required_integer<uint32_t>("uid");
    r.gid = u.required_integer<uint32_t>("gid");
    u.required_array("additional_gids");
    r.additional_gids = u.integers<uint32_t>("additional_gids");
  }
  if (!f.ok()) return f.status().context("malformed");
  return r;
}

}  // namespace

std::string container_record_path(const std::string& dir, const std::string& id) { return record_path(dir, id); }

Status write_container_record(const std::string& dir, const ContainerRecord& r) {
  return write_checksummed_json(container_record_path(dir, r.id), to_json(r), "container record of " + r.id);
}

Result<ContainerRecord> read_container_record(const std::string& path) {
  return read_record(path, kRecordVersion, record_from_json, "container record");
}

Status remove_container_record(const std::string& dir, const std::string& id) {
  return remove_record(dir, id, "container record");
}

LoadedContainerRecords load_container_records(const std::string& dir, const std::string& quarantine_dir) {
  return load_records<ContainerRecord>(dir, quarantine_dir, kRecordVersion, record_from_json);
}

}  // namespace berth
