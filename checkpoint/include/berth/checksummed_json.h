// One durable-record format for every file berth must trust after a restart (sandbox checkpoints,
// container records): a JSON object with "version" and a "checksum" key holding "sha256:<hex>" of
// the canonical JSON (nlohmann dump(): sorted keys, no whitespace) of the object without it.
// Written atomically (temp, fsync, rename, fsync of the directory).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/atomic_file.h"
#include "berth/status.h"

namespace berth {

// `what` names the record in errors ("checkpoint of 3f2a…"). durable false skips the fsyncs (the
// replacement stays atomic): for updates whose loss in a power cut a reboot makes moot.
Status write_checksummed_json(const std::string& path, nlohmann::json object, const std::string& what,
                              bool durable = true);

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
auto read_record(const std::string& path, int version, Parse parse, const std::string& what)
    -> decltype(parse(nlohmann::json())) {
  auto j = read_checksummed_json(path, version);
  if (!j.ok()) return j.status().context(what);
  auto parsed = parse(*j);
  if (!parsed.ok()) return parsed.status().context(what + " " + path);
  return parsed;
}

template <class Record>
struct LoadedRecords {
  std::vector<Record> valid;
  std::vector<std::string> quarantined;    // files moved aside, with why
  std::vector<std::string> temps_removed;  // half-written replacements a crash left
};

// Every record of `dir` that reads and parses; the others quarantined (load_checksummed_dir).
template <class Record, class Parse>
LoadedRecords<Record> load_records(const std::string& dir, const std::string& quarantine_dir, int version,
                                   Parse parse) {
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

// sha256 of `data`, as lowercase hex.
std::string sha256_hex(const std::string& data);

}  // namespace berth
