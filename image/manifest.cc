// Media types are facts of the OCI image spec and Docker's distribution formats.
#include "manifest.h"

#include <sys/utsname.h>

#include <nlohmann/json.hpp>

#include "berth/image_reference.h"

namespace berth {

namespace {

constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
constexpr const char* kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
constexpr const char* kDockerList = "application/vnd.docker.distribution.manifest.list.v2+json";

Result<Descriptor> parse_descriptor(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) return invalid_argument(what + ": a descriptor is not an object");
  Descriptor d;
  d.media_type = j.value("mediaType", "");
  d.digest = j.value("digest", "");
  if (j.contains("size") && j["size"].is_number_integer()) d.size = j["size"].get<int64_t>();
  if (!is_sha256_digest(d.digest)) return invalid_argument(what + ": descriptor digest '" + d.digest + "' is not a sha256 digest");
  if (d.size < 0) return invalid_argument(what + ": descriptor " + d.digest + " has no size");
  if (j.contains("platform") && j["platform"].is_object()) {
    const auto& p = j["platform"];
    d.platform = {p.value("os", ""), p.value("architecture", ""), p.value("variant", "")};
  }
  return d;
}

}  // namespace

Result<ParsedManifest> parse_manifest(const std::string& body, const std::string& media_type, const std::string& what) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return invalid_argument(what + ": manifest is not JSON");
  std::string mt = j.value("mediaType", media_type);
  int schema = j.contains("schemaVersion") && j["schemaVersion"].is_number_integer() ? j["schemaVersion"].get<int>() : 0;
  if (schema == 1 || mt.rfind("application/vnd.docker.distribution.manifest.v1", 0) == 0)
    return invalid_argument(what + ": Docker schema 1 manifests are not supported; push the image with a current client");
  ParsedManifest m;
  bool index = mt == kOciIndex || mt == kDockerList || (mt.empty() && j.contains("manifests"));
  if (index) {
    m.is_index = true;
    if (!j.contains("manifests") || !j["manifests"].is_array()) return invalid_argument(what + ": index has no manifests");
    for (const auto& e : j["manifests"]) {
      auto d = parse_descriptor(e, what);
      if (!d.ok()) return d.status();
      m.manifests.push_back(*d);
    }
    return m;
  }
  if (!mt.empty() && mt != kOciManifest && mt != kDockerManifest && mt != "application/json")
    return invalid_argument(what + ": unsupported manifest media type '" + mt + "'");
  if (!j.contains("config") || !j.contains("layers") || !j["layers"].is_array())
    return invalid_argument(what + ": image manifest needs config and layers");
  auto cfg = parse_descriptor(j["config"], what);
  if (!cfg.ok()) return cfg.status();
  m.config = *cfg;
  for (const auto& e : j["layers"]) {
    auto d = parse_descriptor(e, what);
    if (!d.ok()) return d.status();
    const std::string& lt = d->media_type;
    bool known = lt.empty() || lt.find("tar") != std::string::npos;
    if (!known) return invalid_argument(what + ": layer " + d->digest + " has unsupported media type '" + lt + "'");
    m.layers.push_back(*d);
  }
  return m;
}

Platform host_platform() {
  utsname u{};
  ::uname(&u);
  std::string m = u.machine;
  if (m == "x86_64") return {"linux", "amd64", ""};
  if (m == "aarch64") return {"linux", "arm64", "v8"};
  if (m == "armv7l") return {"linux", "arm", "v7"};
  if (m == "armv6l") return {"linux", "arm", "v6"};
  if (m == "i686" || m == "i386") return {"linux", "386", ""};
  return {"linux", m, ""};
}

Result<Descriptor> select_platform(const ParsedManifest& index, const Platform& want, const std::string& what) {
  const Descriptor* best = nullptr;
  for (const auto& d : index.manifests) {
    if (d.platform.os != want.os || d.platform.architecture != want.architecture) continue;
    if (!want.variant.empty() && !d.platform.variant.empty() && d.platform.variant != want.variant) {
      // arm64's only variant is v8; an entry naming it is the same as one naming none.
      if (!(want.architecture == "arm64" && d.platform.variant == "v8")) continue;
    }
    if (!best || (best->platform.variant.empty() && d.platform.variant == want.variant)) best = &d;
  }
  if (best) return *best;
  std::string offered;
  for (const auto& d : index.manifests) offered += (offered.empty() ? "" : ", ") + d.platform.string();
  return Status(Code::not_found, what + ": no image for " + want.string() + " (the index offers: " +
                                     (offered.empty() ? "nothing" : offered) + ")");
}

}  // namespace berth
