// RegistryClient: the OCI distribution API over libcurl for one repository: manifests and blobs,
// tried on the configured mirrors first and then the registry itself, with anonymous, bearer-token
// and basic auth. Credentials are only ever put in request headers, never in logs or errors.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "berth/image_reference.h"
#include "berth/registry_settings.h"
#include "berth/status.h"

namespace berth {

struct FetchedManifest {
  std::string body;
  std::string media_type;
  std::string digest;  // sha256 of body
};

class RegistryClient {
 public:
  RegistryClient(const RegistryOptions& options, ImageReference ref, RegistryCredentials creds);
  ~RegistryClient();

  // tag or digest; a digest is verified against the body.
  Result<FetchedManifest> get_manifest(const std::string& tag_or_digest);
  // Streams the blob into `sink`; the caller verifies the digest.
  Status get_blob(const std::string& digest, const std::function<Status(const char*, size_t)>& sink);

  struct Endpoint;
  struct Response;

 private:
  Result<Response> request(Endpoint& ep, const std::string& path, const std::vector<std::string>& headers,
                           const std::function<Status(const char*, size_t)>* sink);
  Status authorize(Endpoint& ep, const std::string& challenge);

  const RegistryOptions& options_;
  ImageReference ref_;
  RegistryCredentials creds_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // mirrors then upstream
  std::mutex mu_;
};

}  // namespace berth
