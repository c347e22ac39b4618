// Fuzz target: a registry's WWW-Authenticate challenge and the bearer realm in it
// (image/bearer_realm.h): challenge_params, url_scheme_host, is_loopback_host and the realm check,
// which must never let a plain-http realm take credentials to another host.
#include "../../image/bearer_realm.h"
#include "fuzz_support.h"

using namespace berth;

BERTH_FUZZ_TARGET(www_authenticate) {
  std::string challenge(reinterpret_cast<const char*>(data), size);
  auto params = challenge_params(challenge);
  for (const auto& [key, value] : params) {
    for (char c : key) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    (void)value;
  }
  (void)is_loopback_host(challenge);
  (void)url_scheme_host(challenge);
  // The realm as berth would use it, from an https and from a plain-http registry.
  std::string realm = params.count("realm") ? params["realm"] : challenge;
  auto [scheme, host] = url_scheme_host(realm);
  for (char c : scheme) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
  FUZZ_CHECK(host.find('/') == std::string::npos && host.find('@') == std::string::npos);
  for (const char* base : {"https://registry.example", "http://registry.example", "https://127.0.0.1:5000"}) {
    std::string registry_host = std::string(base).substr(std::string(base).find("://") + 3);
    for (bool creds : {false, true}) {
      Status s = check_bearer_realm(base, registry_host, realm, creds);
      if (!s.ok()) {
        FUZZ_CHECK(s.code() == Code::unauthenticated);
        continue;
      }
      FUZZ_CHECK(scheme == "https" || scheme == "http");
      // Credentials in clear go to the registry itself or to this machine, nowhere else.
      if (scheme == "http" && creds) FUZZ_CHECK(host == registry_host || is_loopback_host(host));
    }
  }
  return 0;
}
