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
  // The registry they belong to (AuthConfig.server_address: a host, or a URL such as
  // "https://index.docker.io/v1/"); empty: the image's own registry. They are sent there alone.
  std::string server_address{};
  bool empty() const {
    return username.empty() && password.empty() && identity_token.empty() && registry_token.empty();
  }
};

struct RegistryHostSettings {
  std::vector<std::string> mirrors;  // "https://mirror.example" or "http://127.0.0.1:5000", tried in order
  bool insecure = false;             // plain http for this registry
  std::string ca_file;               // extra CA bundle for its TLS certificate
  // The bundle's bytes, read while the reader could (a berth-pull fetcher gives up root before it
  // talks to a registry, and an operator's CA file may be root's alone); used instead of ca_file.
  std::string ca_pem{};
  // The mirrors get a pull's credentials for this registry too; by default they go to the
  // registry alone, and a mirror asking for them is passed over.
  bool mirror_credentials = false;
};

struct RegistryOptions {
  std::map<std::string, RegistryHostSettings> hosts;  // by reference domain ("registry.k8s.io")
  int idle_timeout_seconds = 60;                      // abort a transfer that receives nothing this long
  std::function<void(size_t)> on_bytes;               // every body chunk received (metrics); may be unset
};

}  // namespace berth
