// CNI result parsing (nlohmann-json); addresses are checked with inet_pton.
#include "cni_result.h"

#include <arpa/inet.h>

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
  std::vector<std::string> v4, v6;
  auto add = [&](const nlohmann::json& addr) -> Status {
    if (!addr.is_string()) return invalid_argument("cni result: address is not a string");
    std::string ip;
    int family = address_family(addr.get<std::string>(), ip);
    if (family == 0) return invalid_argument("cni result: bad address \"" + addr.get<std::string>() + "\"");
    (family == AF_INET ? v4 : v6).push_back(ip);
    return {};
  };
  if (result.contains("ips")) {
    if (!result["ips"].is_array()) return invalid_argument("cni result: \"ips\" is not an array");
    for (const auto& entry : result["ips"]) {
      if (!entry.is_object() || !entry.contains("address"))
        return invalid_argument("cni result: an \"ips\" entry has no \"address\"");
      if (Status s = add(entry["address"]); !s.ok()) return s;
    }
  }
  for (const char* key : {"ip4", "ip6"}) {  // CNI 0.1.0 / 0.2.0
    if (result.contains(key) && result[key].is_object() && result[key].contains("ip")) {
      if (Status s = add(result[key]["ip"]); !s.ok()) return s;
    }
  }
  v4.insert(v4.end(), v6.begin(), v6.end());
  return v4;
}

}  // namespace berth::cni
