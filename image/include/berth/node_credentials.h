// NodeCredentials: the node's own registry credentials, for pulls that bring none (kubelet's pull
// secrets win when given): an auth file in the format docker, podman, skopeo and crictl read
// ({"auths": {...}, "credHelpers": {...}, "credsStore": ...}), re-read when it changes, and the
// credential helpers it names (`docker-credential-<name> get`), whose answers are cached. Nothing
// read here goes into a log line or an error message.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "berth/image_reference.h"
#include "berth/registry_settings.h"
#include "berth/status.h"

namespace berth {

struct NodeCredentialsOptions {
  std::string auth_file;                            // empty: no node credentials
  std::chrono::milliseconds helper_timeout{10000};  // a helper still running then is killed
  std::chrono::seconds helper_cache{300};           // a helper's answer is asked again after this
};

// The auth file's contents. `auths` keys are normalised (auth_file_key): "host" or
// "host/repository/prefix".
struct AuthFile {
  std::map<std::string, RegistryCredentials> auths;
  std::map<std::string, std::string> cred_helpers;  // by host
  std::string creds_store;                          // the helper for every other host
};

// INVALID_ARGUMENT naming the entry that is wrong (never its value).
Result<AuthFile> parse_auth_file(const std::string& text);
// A helper's `get` answer ({"ServerURL","Username","Secret"}; Username "<token>" makes Secret an
// identity token). INVALID_ARGUMENT when it is not one.
Result<RegistryCredentials> parse_helper_answer(const std::string& text);
// An auths key as a host or host/path: no scheme, no "/v1/" or "/v2/" or trailing slash, Docker
// Hub's names (index.docker.io, registry-1.docker.io) as docker.io.
std::string auth_file_key(const std::string& key);
// When the secret is a JWT with an "exp" claim: that moment (seconds since the epoch).
std::optional<int64_t> jwt_expiry(const std::string& secret);

class NodeCredentials {
 public:
  explicit NodeCredentials(NodeCredentialsOptions options);
  ~NodeCredentials();

  // Credentials for `ref`: the auths entry with the longest key matching its registry and
  // repository, else its registry's helper (credHelpers, then credsStore); none when neither has
  // any, or when there is no auth file. A broken file is logged (once per version of it) and
  // gives none. An error names the helper, the host and what went wrong.
  Result<RegistryCredentials> lookup(const ImageReference& ref);

  struct State;

 private:
  NodeCredentialsOptions opt_;
  std::unique_ptr<State> state_;
};

}  // namespace berth
