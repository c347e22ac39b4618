// One durable-record format for every file berth must trust after a restart (sandbox checkpoints,
// container records): a JSON object with "version" and a "checksum" key holding "sha256:<hex>" of
// the canonical JSON (nlohmann dump(): sorted keys, no whitespace) of the object without it.
// Written atomically (temp, fsync, rename, fsync of the directory).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/atomic_file.h"
#include "berth/status.h"

namespace berth {

// `what` names the record in errors ("checkpoint of 3f2a…"). durable false skips the fsyncs (the
// replacement stays atomic): for updates whose loss in a power cut a reboot makes moot.
Status write_checksummed_json(const std::string& path, nlohmann::json object, const std::string& what, bool durable = true);

// The object without its checksum. NOT_FOUND when the file does not exist; INVALID_ARGUMENT
// naming the file when it does not parse, has another version, or fails its checksum.
Result<nlohmann::json> read_checksummed_json(const std::string& path, int version);

// Reads every <dir>/*.json as a record of `version` and hands it to `accept`; a file that does
// not read, or that `accept` refuses, is moved to quarantine_dir (never deleted, never trusted).
// Returns one line per quarantined file (load_records also removes the temp files of writes a
// crash cut short).
std::vector<std::string> load_checksummed_dir(const std::string& dir, const std::string& quarantine_dir, int version,
                                              const std::function<Status(const nlohmann::json&)>& accept);

// One record per object: <dir>/<id>.json.
std::string record_path(const std::string& dir, const std::string& id);
Status remove_record(const std::string& dir, const std::string& id, const std::string& what);

// Reads and parses one record; `what` prefixes errors ("checkpoint").
template <class Parse>
auto read_record(const std::string& path, int version, Parse parse, const std::string& what) -> decltype(parse(nlohmann::json())) {
  auto j = read_checksummed_json(path, version);
  if (!j.ok()) return j.status().context(what);
  auto parsed = parse(*j);
  if (!parsed.ok()) return parsed.status().context(what + " " + path);
  return parsed;
}

template <class Record>
struct LoadedRecords {
  std::vector<Record> valid;
  std::vector<std::string> quarantined;  // files moved aside, with why
  std::vector<std::string> temps_removed;  // half-written replacements a crash left
};

// Every record of `dir` that reads and parses; the others quarantined (load_checksummed_dir).
template <class Record, class Parse>
LoadedRecords<Record> load_records(const std::string& dir, const std::string& quarantine_dir, int version, Parse parse) {
  LoadedRecords<Record> out;
  out.temps_removed = remove_atomic_write_leftovers(dir);
  out.quarantined = load_checksummed_dir(dir, quarantine_dir, version, [&](const nlohmann::json& j) -> Status {
    auto parsed = parse(j);
    if (!parsed.ok()) return parsed.status();
    out.valid.push_back(std::move(parsed.value()));
    return ok_status();
  });
  return out;
}

// Reads members of a record with at()/get<>(), which throw json::exception on a missing member
// or another type; remembers the member being read so the error can name it:
//   "field 'metadata.name': type must be string, but is number".
class RecordFields {
 public:
  // `parent` is where `object` sits in the record ("metadata", "port_mappings[0]").
  const nlohmann::json& at(const nlohmann::json& object, const char* key, const std::string& parent = "") {
    field_ = parent.empty() ? key : parent + "." + key;
    return object.at(key);
  }
  // An integer member that must fit `Int`: a float, a string or a number out of range is an error
  // (nlohmann's get<Int>() would convert any number unchecked, a float out of range undefined).
  template <class Int>
  Int integer(const nlohmann::json& object, const char* key, const std::string& parent = "") {
    return checked_integer<Int>(at(object, key, parent));
  }
  // Each element of an integer array member, checked the same way.
  template <class Int>
  std::vector<Int> integers(const nlohmann::json& object, const char* key, const std::string& parent = "") {
    const auto& array = at(object, key, parent);
    if (!array.is_array())
      throw nlohmann::json::type_error::create(302, std::string("type must be array, but is ") + array.type_name(), &array);
    std::vector<Int> out;
    for (const auto& v : array) out.push_back(checked_integer<Int>(v));
    return out;
  }
  // The error for an exception thrown while reading, without nlohmann's "[json.exception…] ".
  Status error(const nlohmann::json::exception& e) const;

 private:
  template <class Int>
  static Int checked_integer(const nlohmann::json& v) {
    if (!v.is_number())
      throw nlohmann::json::type_error::create(302, std::string("type must be number, but is ") + v.type_name(), &v);
    if (!v.is_number_integer()) throw nlohmann::json::type_error::create(302, "type must be an integer, but is " + v.dump(), &v);
    bool fits = v.is_number_unsigned()
                    ? v.get<uint64_t>() <= uint64_t(std::numeric_limits<Int>::max())
                    : v.get<int64_t>() >= int64_t(std::numeric_limits<Int>::min()) &&
                          (uint64_t(std::numeric_limits<Int>::max()) > uint64_t(INT64_MAX) ||
                           v.get<int64_t>() <= int64_t(std::numeric_limits<Int>::max()));
    if (!fits) throw nlohmann::json::out_of_range::create(406, "integer " + v.dump() + " out of range", &v);
    return v.is_number_unsigned() ? static_cast<Int>(v.get<uint64_t>()) : static_cast<Int>(v.get<int64_t>());
  }
  std::string field_;
};

// sha256 of `data`, as lowercase hex.
std::string sha256_hex(const std::string& data);

}  // namespace berth
