// Image references normalised the way kubelet and docker name images: "busybox" is
// docker.io/library/busybox:latest; "host:port/repo:tag", "repo@sha256:…", "repo:tag@sha256:…".
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

struct ImageReference {
  std::string domain;      // "docker.io", "registry.k8s.io", "127.0.0.1:5000"
  std::string repository;  // path inside the registry: "library/busybox"
  std::string tag;         // empty when only a digest was given
  std::string digest;      // "sha256:<64 hex>" or empty

  std::string name() const { return domain + "/" + repository; }
  // domain/repository[:tag][@digest]
  std::string string() const;
  // The host the registry API is served on (docker.io's is registry-1.docker.io).
  std::string api_host() const;
};

// INVALID_ARGUMENT naming the reference and what is wrong with it.
Result<ImageReference> parse_image_reference(const std::string& text);

// True for "sha256:" followed by 64 lowercase hex digits.
bool is_sha256_digest(const std::string& s);

}  // namespace berth
