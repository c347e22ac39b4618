// Fuzz target: CDI spec files (cdi/). The first byte steers: mode % 3 picks the file name, and so
// the parser (.json: nlohmann; .yaml, .yml: yaml-cpp); bit 7 applies a valid spec's edits to a
// small OCI spec; (mode / 3) % 2 also resolves every device through a CdiRegistry over a scratch
// dir holding the file. The rest is the file's bytes. Beyond "no crash, no exception": an invalid
// file is INVALID_ARGUMENT naming the file, a valid one has a good kind and unique, well-formed
// device names, and every message and edited spec dumps as JSON (valid UTF-8).
#include <algorithm>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "../../cdi/spec_parse.h"
#include "berth/cdi.h"
#include "fuzz_support.h"

namespace {

using namespace berth;

bool dumps(const nlohmann::json& j) {
  try {
    (void)j.dump();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void apply(const cdi::SpecFile& spec) {
  CdiEdits edits{{{spec.path, spec.edits}}};
  for (const auto& d : spec.devices) edits.blocks.push_back({spec.path + ": device " + d.name, d.edits});
  oci::Spec oci{.process = oci::Process{.user = {.uid = 1000, .gid = 1000}, .env = {"PATH=/bin"}},
                .mounts = {{.destination = "/proc", .type = "proc", .source = "proc"}},
                .linux = oci::Linux{.resources = oci::Resources{.devices = {{.allow = false, .access = "rwm"}}}}};
  const nlohmann::json before = oci::to_json(oci);
  Status s = apply_cdi_edits(oci, edits);
  FUZZ_CHECK(dumps(s.message()));
  const nlohmann::json after = oci::to_json(oci);
  if (!s.ok()) {
    FUZZ_CHECK(after == before);  // untouched on failure
    return;
  }
  FUZZ_CHECK(dumps(after));
  // What the edits made reads back as it is written.
  auto back = oci::spec_from_json(after);
  FUZZ_CHECK(back.ok() && oci::to_json(*back) == after);
}

void resolve(const std::string& text, const char* ext, const cdi::SpecFile& spec) {
  const std::string dir = fuzz::scratch_dir() + "/cdi";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  fuzz::write_file(dir + "/spec" + ext, text);
  CdiRegistry registry({dir});
  std::vector<std::string> names;
  for (const auto& d : spec.devices) names.push_back(spec.kind + "=" + d.name);
  auto edits = registry.resolve(names);
  FUZZ_CHECK(edits.ok());
  FUZZ_CHECK(edits->blocks.size() ==
             names.size() + (spec.edits.env.empty() && spec.edits.device_nodes.empty() && spec.edits.mounts.empty() &&
                                     spec.edits.hooks.empty() && spec.edits.additional_gids.empty()
                                 ? 0
                                 : 1));
  auto unknown = registry.resolve({spec.kind + "=no-such-device-here"});
  FUZZ_CHECK(!unknown.ok() && unknown.status().code() == Code::not_found && dumps(unknown.status().message()));
}

}  // namespace

BERTH_FUZZ_TARGET(cdi) {
  fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string text(in.rest());
  static const char* const kExt[] = {".json", ".yaml", ".yml"};
  const char* ext = kExt[mode % 3];
  const std::string path = std::string("/etc/cdi/fuzz") + ext;
  std::vector<std::string> named;
  auto spec = cdi::parse_spec(text, path, &named);
  if (!spec.ok()) {
    FUZZ_CHECK(spec.status().code() == Code::invalid_argument);
    FUZZ_CHECK(spec.status().message().rfind(path + ": ", 0) == 0);
    FUZZ_CHECK(dumps(spec.status().message()));
    return 0;
  }
  FUZZ_CHECK(!spec->devices.empty());
  std::set<std::string> unique;
  for (const auto& d : spec->devices) {
    std::string q = spec->kind + "=" + d.name;
    FUZZ_CHECK(check_cdi_device_name(q).ok());
    FUZZ_CHECK(unique.insert(q).second);
    FUZZ_CHECK(std::find(named.begin(), named.end(), q) != named.end());
  }
  if (mode & 0x80) apply(*spec);
  if ((mode / 3) % 2) resolve(text, ext, *spec);
  return 0;
}
