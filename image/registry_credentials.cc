// See registry_credentials.h.
#include "registry_credentials.h"

#include <sys/random.h>

#include <cctype>

#include "sha256.h"

namespace berth {
namespace {

// "https://index.docker.io/v1/" -> "index.docker.io"; lower case.
std::string host_of(std::string address) {
  if (size_t scheme = address.find("://"); scheme != std::string::npos) address.erase(0, scheme + 3);
  address = address.substr(0, address.find('/'));
  for (char& c : address) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return address;
}

bool is_docker_hub(const std::string& host) {
  return host == "docker.io" || host == "index.docker.io" || host == "registry-1.docker.io" ||
         host == "registry.hub.docker.com";
}

const std::string& process_key() {
  static const std::string key = [] {
    std::string k(32, '\0');
    size_t got = 0;
    while (got < k.size()) {
      ssize_t n = ::getrandom(k.data() + got, k.size() - got, 0);
      if (n > 0) got += static_cast<size_t>(n);
    }
    return k;
  }();
  return key;
}

}  // namespace

bool credentials_are_for(const RegistryCredentials& creds, const ImageReference& ref) {
  if (creds.server_address.empty()) return true;
  std::string host = host_of(creds.server_address);
  std::string domain = host_of(ref.domain);
  if (is_docker_hub(host) && is_docker_hub(domain)) return true;
  return host == domain || host == host_of(ref.api_host());
}

std::string credentials_key(const RegistryCredentials& creds) {
  if (creds.empty()) return "";
  Sha256 h;
  // Each part with its length first, so no two different sets of parts read alike.
  for (const std::string* part :
       {&process_key(), &creds.username, &creds.password, &creds.identity_token, &creds.registry_token}) {
    uint64_t n = part->size();
    h.update(&n, sizeof n);
    h.update(part->data(), part->size());
  }
  return h.digest();
}

}  // namespace berth
