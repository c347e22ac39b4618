// See bearer_realm.h.
#include "bearer_realm.h"

#include <arpa/inet.h>

#include <cctype>

namespace berth {

std::map<std::string, std::string> challenge_params(const std::string& s) {
  std::map<std::string, std::string> out;
  size_t i = s.find(' ');
  while (i != std::string::npos && i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
    size_t eq = s.find('=', i);
    if (eq == std::string::npos) break;
    std::string key = s.substr(i, eq - i);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value;
    i = eq + 1;
    if (i < s.size() && s[i] == '"') {
      size_t end = s.find('"', i + 1);
      value = s.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
      i = end == std::string::npos ? s.size() : end + 1;
    } else {
      size_t end = s.find(',', i);
      value = s.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end;
    }
    out[key] = value;
  }
  return out;
}

bool is_loopback_host(std::string host) {
  if (host.size() > 2 && host.front() == '[')
    host = host.substr(1, host.find(']') - 1);
  else if (size_t c = host.rfind(':'); c != std::string::npos && host.find(':') == c)
    host = host.substr(0, c);
  if (host == "localhost" || host == "::1") return true;
  in_addr a{};
  return ::inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

std::pair<std::string, std::string> url_scheme_host(const std::string& url) {
  size_t colon = url.find("://");
  if (colon == std::string::npos || colon == 0) return {};
  std::string scheme = url.substr(0, colon);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string rest = url.substr(colon + 3);
  std::string host = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);  // userinfo is never a host
  return {scheme, host};
}

Status check_bearer_realm(const std::string& registry_base, const std::string& registry_host, const std::string& realm,
                          bool sends_credentials) {
  auto [scheme, host] = url_scheme_host(realm);
  const std::string what = "registry " + registry_host + ": ";
  if (scheme != "https" && scheme != "http")
    return Status(Code::unauthenticated, what + "bearer realm '" + realm + "' is not an http(s) URL");
  if (scheme == "https") return ok_status();
  bool plain_registry = registry_base.rfind("http://", 0) == 0 || is_loopback_host(registry_host);
  if (!plain_registry && !is_loopback_host(host))
    return Status(Code::unauthenticated, what + "refusing the bearer realm " + realm +
                                             ": a token service of an https registry must use https");
  if (sends_credentials && host != registry_host && !is_loopback_host(host))
    return Status(Code::unauthenticated, what + "refusing to send credentials over plain http to " + host +
                                             " (the bearer realm names another host)");
  return ok_status();
}

}  // namespace berth
