// Container records in the checksummed JSON record format (checksummed_json.h), version 1.
#include "berth/container_record.h"



#include "berth/checksummed_json.h"

namespace berth {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;

json to_json(const ContainerRecord& r) {
  return {{"version", kVersion},
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

Result<ContainerRecord> from_json(const json& j) {
  try {
    ContainerRecord r;
    r.id = j.at("id").get<std::string>();
    r.sandbox_id = j.at("sandbox_id").get<std::string>();
    r.name = j.at("name").get<std::string>();
    r.attempt = j.at("attempt").get<uint32_t>();
    r.image_id = j.at("image_id").get<std::string>();
    r.image_ref = j.at("image_ref").get<std::string>();
    r.stop_signal = j.value("stop_signal", "");
    r.runtime_handler = j.at("runtime_handler").get<std::string>();
    r.log_path = j.at("log_path").get<std::string>();
    r.config = j.at("config");
    r.state = j.at("state").get<int>();
    r.created_at = j.at("created_at").get<int64_t>();
    r.started_at = j.at("started_at").get<int64_t>();
    r.finished_at = j.at("finished_at").get<int64_t>();
    r.exit_code = j.at("exit_code").get<int32_t>();
    r.reason = j.at("reason").get<std::string>();
    r.message = j.at("message").get<std::string>();
    r.pid = j.at("pid").get<int>();
    r.uid = j.at("user").at("uid").get<uint32_t>();
    r.gid = j.at("user").at("gid").get<uint32_t>();
    r.additional_gids = j.at("user").at("additional_gids").get<std::vector<uint32_t>>();
    return r;
  } catch (const json::exception& e) {
    return invalid_argument(std::string("malformed: ") + e.what());
  }
}

}  // namespace

std::string container_record_path(const std::string& dir, const std::string& id) { return record_path(dir, id); }

Status write_container_record(const std::string& dir, const ContainerRecord& r) {
  return write_checksummed_json(container_record_path(dir, r.id), to_json(r), "container record of " + r.id);
}

Result<ContainerRecord> read_container_record(const std::string& path) { return read_record(path, kVersion, from_json, "container record"); }

Status remove_container_record(const std::string& dir, const std::string& id) { return remove_record(dir, id, "container record"); }

LoadedContainerRecords load_container_records(const std::string& dir, const std::string& quarantine_dir) {
  LoadedContainerRecords out;
  out.quarantined = load_checksummed_dir(dir, quarantine_dir, kVersion, [&](const json& j) -> Status {
    auto parsed = from_json(j);
    if (!parsed.ok()) return parsed.status();
    out.valid.push_back(std::move(parsed.value()));
    return ok_status();
  });
  return out;
}

}  // namespace berth
