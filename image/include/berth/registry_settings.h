// Registry access settings from berth.toml (mirrors, plain-http registries, CA files, the idle
// timeout) and the credentials of one pull request.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace berth {

struct RegistryCredentials {
  std::string username;
  std::string password;
  std::string identity_token;  // an OAuth2 refresh token for the registry's token service
  std::string registry_token;  // a bearer token to use as is
  bool empty() const { return username.empty() && password.empty() && identity_token.empty() && registry_token.empty(); }
};

struct RegistryHostSettings {
  std::vector<std::string> mirrors;  // "https://mirror.example" or "http://127.0.0.1:5000", tried in order
  bool insecure = false;             // plain http for this registry
  std::string ca_file;               // extra CA bundle for its TLS certificate
};

struct RegistryOptions {
  std::map<std::string, RegistryHostSettings> hosts;  // by reference domain ("registry.k8s.io")
  int idle_timeout_seconds = 60;                      // abort a transfer that receives nothing this long
  std::function<void(size_t)> on_bytes;               // every body chunk received (metrics); may be unset
};

}  // namespace berth
