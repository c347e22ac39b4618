// A registry's WWW-Authenticate challenge read, and where berth may go for a token and with what:
// the realm of a Bearer challenge is the registry's word, so it is trusted no further than the
// registry itself. Internal to image/.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "berth/status.h"

namespace berth {

// The key="value" (or key=value) pairs of a WWW-Authenticate challenge after its scheme, keys
// lowercased: outside bytes, parsed without ever reading past the end.
std::map<std::string, std::string> challenge_params(const std::string& challenge);

// "localhost", 127.0.0.0/8 or ::1, with or without a port ("127.0.0.1:5000", "[::1]:5000").
bool is_loopback_host(std::string host);

// "scheme://[user@]host[:port]/..." -> {lowercase scheme, host[:port]}; empty when not a URL.
std::pair<std::string, std::string> url_scheme_host(const std::string& url);

// OK when berth may fetch a token from `realm` for the registry at `registry_base` ("https://h" or
// "http://h", the scheme berth speaks to it) named `registry_host`: https always; plain http only
// where berth already speaks plain http to the registry (configured insecure, or on loopback) or
// to a loopback token service; and never with credentials to another host than the registry's
// own in clear. UNAUTHENTICATED saying why otherwise.
Status check_bearer_realm(const std::string& registry_base, const std::string& registry_host, const std::string& realm,
                          bool sends_credentials);

}  // namespace berth
