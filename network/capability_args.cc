// Capability arguments for runtimeConfig. Kubernetes quantities are parsed by hand here: the
// bandwidth annotations are the only quantities berth reads, and only the suffix forms
// ("500k", "10M", "1Gi", plain numbers) matter for them.
#include "capability_args.h"

#include "berth/json_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace berth::cni {

Result<unsigned long long> parse_bandwidth(const std::string& q) {
  if (q.empty()) return invalid_argument("empty quantity");
  char* end = nullptr;
  errno = 0;
  double number = std::strtod(q.c_str(), &end);
  if (end == q.c_str() || errno != 0 || !(number > 0))
    return invalid_argument("\"" + q + "\" is not a positive quantity");
  std::string suffix(end);
  static const std::pair<const char*, double> kSuffixes[] = {{"", 1},
                                                             {"k", 1e3},
                                                             {"M", 1e6},
                                                             {"G", 1e9},
                                                             {"T", 1e12},
                                                             {"P", 1e15},
                                                             {"Ki", 1024.0},
                                                             {"Mi", 1048576.0},
                                                             {"Gi", 1073741824.0},
                                                             {"Ti", 1099511627776.0},
                                                             {"Pi", 1125899906842624.0}};
  for (const auto& [s, factor] : kSuffixes) {
    if (suffix == s) {
      double bits = std::round(number * factor);
      if (bits < 1 || bits > 1.8e19) return invalid_argument("\"" + q + "\" is out of range");
      return static_cast<unsigned long long>(bits);
    }
  }
  return invalid_argument("\"" + q + "\" has an unknown suffix \"" + suffix + "\"");
}

namespace {

// The capabilities a plugin config declares true ({"capabilities": {"portMappings": true}}). Only
// true asks: a capability written as anything else is not wanted, as before any reader checked it.
std::vector<std::string> declared_capabilities(const nlohmann::json& plugin) {
  std::vector<std::string> out;
  JsonFields p(plugin);
  const nlohmann::json* caps = p.object("capabilities");
  if (!caps) return out;
  JsonFields c = p.nested(*caps, "capabilities");
  for (const auto& item : caps->items())
    if (c.boolean(item.key().c_str(), false)) out.push_back(item.key());
  return out;
}

}  // namespace

bool wants_capability(const nlohmann::json& plugins, const std::string& name) {
  if (!plugins.is_array()) return false;
  for (const auto& p : plugins) {
    auto caps = declared_capabilities(p);
    if (std::find(caps.begin(), caps.end(), name) != caps.end()) return true;
  }
  return false;
}

Result<nlohmann::json> capability_args(const PodNetworkRequest& r, const nlohmann::json& plugins) {
  nlohmann::json offered = nlohmann::json::object();
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& m : r.port_mappings) {
    if (m.host_port <= 0) continue;  // only published ports become host port rules
    nlohmann::json p = {{"hostPort", m.host_port},
                        {"containerPort", m.container_port},
                        {"protocol", m.protocol.empty() ? "tcp" : m.protocol}};
    if (!m.host_ip.empty()) p["hostIP"] = m.host_ip;
    ports.push_back(std::move(p));
  }
  offered["portMappings"] = std::move(ports);
  offered["dns"] = {{"servers", r.dns.servers}, {"searches", r.dns.searches}, {"options", r.dns.options}};
  // The annotations are read only for a network that shapes traffic: a pod with a typo in one
  // must not fail to start on a network that would ignore it anyway.
  nlohmann::json bandwidth = nlohmann::json::object();
  const bool shaped = wants_capability(plugins, "bandwidth");
  for (auto [annotation, rate, burst] : {std::tuple{"kubernetes.io/ingress-bandwidth", "ingressRate", "ingressBurst"},
                                         std::tuple{"kubernetes.io/egress-bandwidth", "egressRate", "egressBurst"}}) {
    auto it = r.annotations.find(annotation);
    if (!shaped || it == r.annotations.end()) continue;
    auto bits = parse_bandwidth(it->second);
    if (!bits.ok()) return bits.status().context(std::string("annotation ") + annotation);
    bandwidth[rate] = *bits;
    // Kubernetes gives no burst; the largest the bandwidth plugin accepts means "no burst limit".
    bandwidth[burst] = static_cast<unsigned long long>(UINT32_MAX);
  }
  if (!bandwidth.empty()) offered["bandwidth"] = std::move(bandwidth);
  nlohmann::json annotations = nlohmann::json::object();
  for (const auto& [k, v] : r.annotations) annotations[k] = v;
  offered["io.kubernetes.cri.pod-annotations"] = std::move(annotations);
  return offered;
}

nlohmann::json runtime_config_for(const nlohmann::json& plugin, const nlohmann::json& offered) {
  nlohmann::json out = nlohmann::json::object();
  JsonFields o(offered);
  for (const auto& name : declared_capabilities(plugin))
    if (const nlohmann::json* v = o.member(name.c_str())) out[name] = *v;
  return out;
}

}  // namespace berth::cni
