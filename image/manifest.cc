// Media types are facts of the OCI image spec and Docker's distribution formats.
#include "manifest.h"

#include <sys/utsname.h>

#include <nlohmann/json.hpp>

#include "berth/image_reference.h"
#include "berth/json_fields.h"

namespace berth {

namespace {

constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
constexpr const char* kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
constexpr const char* kDockerList = "application/vnd.docker.distribution.manifest.list.v2+json";

// `where` names the descriptor in errors: "config", "layers[2]", "manifests[0]".
Result<Descriptor> parse_descriptor(const nlohmann::json& j, const std::string& what, const std::string& where) {
  JsonFields f(j, where);
  if (!j.is_object()) return invalid_argument(what + ": " + where + ": a descriptor is not an object");
  Descriptor d;
  d.media_type = f.string("mediaType");
  d.digest = f.string("digest");
  d.size = f.integer<int64_t>("size", -1);
  if (const nlohmann::json* p = f.object("platform")) {
    JsonFields pf = f.nested(*p, "platform");
    d.platform = {pf.string("os"), pf.string("architecture"), pf.string("variant")};
  }
  if (!f.ok()) return f.status().context(what);
  if (!is_sha256_digest(d.digest))
    return invalid_argument(what + ": descriptor digest '" + d.digest + "' is not a sha256 digest");
  if (d.size < 0) return invalid_argument(what + ": descriptor " + d.digest + " has no size");
  return d;
}

}  // namespace

Result<ParsedManifest> parse_manifest(const std::string& body, const std::string& media_type, const std::string& what) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return invalid_argument(what + ": manifest is not JSON");
  JsonFields f(j);
  std::string mt = f.string("mediaType", media_type);
  int64_t schema = f.integer<int64_t>("schemaVersion", 0);
  const nlohmann::json* manifests = f.array("manifests");
  const nlohmann::json* layers = f.array("layers");
  if (!f.ok()) return f.status().context(what);
  if (schema == 1 || mt.rfind("application/vnd.docker.distribution.manifest.v1", 0) == 0)
    return invalid_argument(what +
                            ": Docker schema 1 manifests are not supported; push the image with a current client");
  ParsedManifest m;
  bool index = mt == kOciIndex || mt == kDockerList || (mt.empty() && f.member("manifests"));
  if (index) {
    m.is_index = true;
    if (!manifests) return invalid_argument(what + ": index has no manifests");
    for (size_t i = 0; i < manifests->size(); ++i) {
      auto d = parse_descriptor((*manifests)[i], what, "manifests[" + std::to_string(i) + "]");
      if (!d.ok()) return d.status();
      m.manifests.push_back(*d);
    }
    return m;
  }
  if (!mt.empty() && mt != kOciManifest && mt != kDockerManifest && mt != "application/json")
    return invalid_argument(what + ": unsupported manifest media type '" + mt + "'");
  const nlohmann::json* config = f.member("config");
  if (!config || !layers) return invalid_argument(what + ": image manifest needs config and layers");
  auto cfg = parse_descriptor(*config, what, "config");
  if (!cfg.ok()) return cfg.status();
  m.config = *cfg;
  for (size_t i = 0; i < layers->size(); ++i) {
    auto d = parse_descriptor((*layers)[i], what, "layers[" + std::to_string(i) + "]");
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
  return Status(Code::not_found, what + ": no image for " + want.string() +
                                     " (the index offers: " + (offered.empty() ? "nothing" : offered) + ")");
}

}  // namespace berth
