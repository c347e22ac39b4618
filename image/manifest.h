// Manifests and image configs: OCI image manifest and index, Docker schema 2 manifest and
// manifest list; schema 1 is refused. Picks the index entry for linux and this machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct Platform {
  std::string os, architecture, variant;
  std::string string() const { return os + "/" + architecture + (variant.empty() ? "" : "/" + variant); }
};

struct Descriptor {
  std::string media_type;
  std::string digest;
  int64_t size = -1;
  Platform platform;  // index entries only
};

struct ParsedManifest {
  bool is_index = false;
  std::vector<Descriptor> manifests;  // index
  Descriptor config;                  // image manifest
  std::vector<Descriptor> layers;     // image manifest, lowest first
};

// `what` names the manifest in errors (reference and digest).
Result<ParsedManifest> parse_manifest(const std::string& body, const std::string& media_type, const std::string& what);

// linux and this machine's architecture (and variant for arm); the error lists what is offered.
Platform host_platform();
Result<Descriptor> select_platform(const ParsedManifest& index, const Platform& want, const std::string& what);

}  // namespace berth
