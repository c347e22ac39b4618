// Fuzz target: what a registry answers with (image/): manifests and indexes under every media type
// berth asks for (manifest.h), platform selection from an index, image configs
// (summarise_image_config), registry error bodies (registry_error_text), and berthd's own image
// index file (ImageIndex::load). The first byte picks the parser and the Content-Type; the rest is
// the body.
#include "../../image/image_index.h"
#include "../../image/manifest.h"
#include "../../image/registry_error.h"
#include "berth/image_reference.h"
#include "fuzz_support.h"

using namespace berth;

namespace {

const char* const kMediaTypes[] = {
    "",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v1+prettyjws",
    "application/json",
    "text/html",
};

void check_descriptor(const Descriptor& d) {
  FUZZ_CHECK(is_sha256_digest(d.digest));
  FUZZ_CHECK(d.size >= 0);
}

void manifest(const std::string& body, const char* media_type) {
  auto m = parse_manifest(body, media_type, "manifest sha256:fuzz");
  if (!m.ok()) {
    FUZZ_CHECK(m.status().code() == Code::invalid_argument);
    return;
  }
  if (!m->is_index) {
    check_descriptor(m->config);
    for (const auto& l : m->layers) check_descriptor(l);
    return;
  }
  for (const auto& d : m->manifests) check_descriptor(d);
  for (const Platform& want : {host_platform(), Platform{"linux", "arm64", "v8"}, Platform{"linux", "arm", "v7"},
                               Platform{"windows", "amd64", ""}}) {
    auto pick = select_platform(*m, want, "index sha256:fuzz");
    if (!pick.ok()) {
      FUZZ_CHECK(pick.status().code() == Code::not_found);
      continue;
    }
    FUZZ_CHECK(pick->platform.os == want.os && pick->platform.architecture == want.architecture);
  }
}

}  // namespace

BERTH_FUZZ_TARGET(manifest) {
  fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string body(in.rest());
  switch (mode % 4) {
    case 0: manifest(body, kMediaTypes[(mode / 4) % (sizeof kMediaTypes / sizeof *kMediaTypes)]); break;
    case 1: {
      auto config = summarise_image_config(body);
      if (!config.ok()) FUZZ_CHECK(config.status().code() == Code::invalid_argument);
      break;
    }
    case 2: (void)registry_error_text(body); break;
    default: {
      std::string file = fuzz::scratch_dir() + "/index.json";
      fuzz::write_file(file, body);
      ImageIndex index(file);
      if (!index.load().ok()) break;
      for (const auto& image : index.images()) {
        FUZZ_CHECK(is_sha256_digest(image.id));
        FUZZ_CHECK(index.find(image.id) != nullptr);
        for (const auto& tag : image.repo_tags) (void)index.find(tag);
      }
    }
  }
  return 0;
}
