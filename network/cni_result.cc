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
  auto wrong_type = [](const std::string& field, const char* want, const nlohmann::json& got) {
    return invalid_argument("cni result: field '" + field + "': type must be " + want + ", but is " + got.type_name());
  };
  std::vector<std::string> v4, v6;
  auto add = [&](const nlohmann::json& addr, const std::string& field) -> Status {
    if (!addr.is_string()) return wrong_type(field, "string", addr);
    std::string ip;
    int family = address_family(addr.get<std::string>(), ip);
    if (family == 0) return invalid_argument("cni result: bad address \"" + addr.get<std::string>() + "\"");
    (family == AF_INET ? v4 : v6).push_back(ip);
    return {};
  };
  // Not read here, but the result goes on to the next plugin as prevResult and to the caller:
  // a wrong shape is reported against the plugin that printed it.
  if (result.contains("interfaces") && !result["interfaces"].is_null() && !result["interfaces"].is_array())
    return wrong_type("interfaces", "array", result["interfaces"]);
  if (result.contains("ips")) {
    const auto& ips = result["ips"];
    if (!ips.is_array()) return wrong_type("ips", "array", ips);
    for (size_t i = 0; i < ips.size(); ++i) {
      const auto& entry = ips[i];
      const std::string field = "ips[" + std::to_string(i) + "]";
      if (!entry.is_object()) return wrong_type(field, "object", entry);
      if (!entry.contains("address")) return invalid_argument("cni result: an \"ips\" entry has no \"address\"");
      if (entry.contains("interface") && !entry["interface"].is_null() && !entry["interface"].is_number_integer())
        return wrong_type(field + ".interface", "integer", entry["interface"]);
      if (Status s = add(entry["address"], field + ".address"); !s.ok()) return s;
    }
  }
  for (const char* key : {"ip4", "ip6"}) {  // CNI 0.1.0 / 0.2.0
    if (!result.contains(key) || result[key].is_null()) continue;
    const auto& section = result[key];
    if (!section.is_object()) return wrong_type(key, "object", section);
    if (section.contains("ip")) {
      if (Status s = add(section["ip"], std::string(key) + ".ip"); !s.ok()) return s;
    }
  }
  v4.insert(v4.end(), v6.begin(), v6.end());
  return v4;
}

}  // namespace berth::cni
