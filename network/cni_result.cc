// CNI result parsing (nlohmann-json); addresses are checked with inet_pton.
#include "cni_result.h"

#include <arpa/inet.h>

#include "berth/json_fields.h"

namespace berth::cni {
namespace {

// "10.88.0.5/16" -> "10.88.0.5" and its family; family 0 when it is not an address.
int address_family(const std::string& cidr, std::string& ip) {
  ip = cidr.substr(0, cidr.find('/'));
  unsigned char buf[16];
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) return AF_INET;
  if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) return AF_INET6;
  return 0;
}

}  // namespace

Result<std::vector<std::string>> result_ips(const nlohmann::json& result) {
  if (!result.is_object()) return invalid_argument("cni result is not a JSON object");
  JsonFields f(result);
  std::vector<std::string> v4, v6;
  auto add = [&](JsonFields& where, const char* key) -> Status {
    std::string cidr = where.required_string(key);
    if (!where.ok()) return where.status().context("cni result");
    std::string ip;
    int family = address_family(cidr, ip);
    if (family == 0) return invalid_argument("cni result: bad address \"" + cidr + "\"");
    (family == AF_INET ? v4 : v6).push_back(ip);
    return {};
  };
  // Not read here, but the result goes on to the next plugin as prevResult and to the caller:
  // a wrong shape is reported against the plugin that printed it.
  f.array("interfaces");
  if (const nlohmann::json* ips = f.array("ips")) {
    for (size_t i = 0; i < ips->size(); ++i) {
      JsonFields entry = f.nested((*ips)[i], "ips[" + std::to_string(i) + "]");
      entry.integer<int64_t>("interface", 0);
      if (Status s = add(entry, "address"); !s.ok()) return s;
    }
  }
  for (const char* key : {"ip4", "ip6"}) {  // CNI 0.1.0 / 0.2.0
    const nlohmann::json* section = f.object(key);
    if (!section) continue;
    JsonFields sf = f.nested(*section, key);
    if (!sf.member("ip")) continue;
    if (Status s = add(sf, "ip"); !s.ok()) return s;
  }
  if (!f.ok()) return f.status().context("cni result");
  v4.insert(v4.end(), v6.begin(), v6.end());
  return v4;
}

}  // namespace berth::cni
