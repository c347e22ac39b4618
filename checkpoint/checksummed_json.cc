// See checksummed_json.h. The checksum is computed with nettle over nlohmann::json::dump(),
// which is canonical (keys sorted, no whitespace), so any JSON library can recompute it.
#include "berth/checksummed_json.h"

#include <dirent.h>
#include <nettle/sha2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <sstream>

#include "berth/atomic_file.h"
#include "berth/file_text.h"
#include "berth/json_fields.h"

namespace berth {

using nlohmann::json;

std::string sha256_hex(const std::string& data) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  uint8_t md[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, sizeof md, md);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : md) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

Status write_checksummed_json(const std::string& path, json object, const std::string& what, bool durable) {
  // dump() throws on strings that are not UTF-8 (a message may quote a runtime's raw stderr);
  // replacing them keeps the record writable, and the checksum matches the replaced text, which
  // is what a reader's dump() of the parsed file gives.
  constexpr auto replace = json::error_handler_t::replace;
  object.erase("checksum");
  std::string sum = "sha256:" + sha256_hex(object.dump(-1, ' ', false, replace));
  object["checksum"] = sum;
  return write_file_atomically(path, object.dump(2, ' ', false, replace) + "\n", 0600, durable)
      .context("write " + what);
}

Result<json> read_checksummed_json(const std::string& path, int version) {
  auto text = read_file_bytes(path);
  if (!text.ok()) return errno_status(text.status().sys_errno(), "read " + path, Code::not_found);
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return invalid_argument(path + ": not JSON");
  std::string stored;
  {
    JsonFields f(j);
    const json* v = f.required("version");
    if (f.required_integer<int>("version") != version || !f.ok())
      return invalid_argument(path + ": unsupported version " + (v ? v->dump() : "(none)"));
    stored = f.required_string("checksum");
    if (!f.ok()) return invalid_argument(path + ": no checksum");
  }  // the reader refers to j, which changes below
  j.erase("checksum");
  std::string computed = "sha256:" + sha256_hex(j.dump());
  if (stored != computed)
    return invalid_argument(path + ": checksum mismatch (stored " + stored + ", computed " + computed + ")");
  return j;
}

std::string record_path(const std::string& dir, const std::string& id) { return dir + "/" + id + ".json"; }

Status remove_record(const std::string& dir, const std::string& id, const std::string& what) {
  if (::unlink(record_path(dir, id).c_str()) != 0 && errno != ENOENT)
    return errno_status(errno, "remove " + what + " of " + id);
  return ok_status();
}

std::vector<std::string> load_checksummed_dir(const std::string& dir, const std::string& quarantine_dir, int version,
                                              const std::function<Status(const json&)>& accept) {
  std::vector<std::string> quarantined;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return quarantined;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".json") names.push_back(n);
  }
  ::closedir(d);
  for (const auto& n : names) {
    auto j = read_checksummed_json(dir + "/" + n, version);
    Status s = j.ok() ? accept(*j).context(dir + "/" + n) : j.status();
    if (s.ok()) continue;
    ::mkdir(quarantine_dir.c_str(), 0700);
    std::string dest = quarantine_dir + "/" + n + "." + std::to_string(::time(nullptr));
    ::rename((dir + "/" + n).c_str(), dest.c_str());
    quarantined.push_back(s.message() + "; moved to " + dest);
  }
  return quarantined;
}

}  // namespace berth
