// check_pod_sandbox_config: the metadata goes into CNI_ARGS, the hostname into /etc/hostname and
// /etc/hosts, the DNS config into resolv.conf, sysctls into /proc/sys, the log directory and
// cgroup parent become paths, and labels and annotations are stored and passed to plugins.
#include <string>

#include "field_checks.h"
#include "request_checks.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

Status check_profile(const std::string& field, const v1::SecurityProfile& p) {
  if (p.profile_type() != v1::SecurityProfile::Localhost)
    return check_no_nul(field + ".localhost_ref", p.localhost_ref());
  return check_no_control(field + ".localhost_ref", p.localhost_ref());
}

Status check_sysctl(const std::string& name, const std::string& value) {
  const std::string field = "config.linux.sysctls[" + name + "]";
  if (Status s = check_one_word(field, name); !s.ok()) return s;
  // A name is dotted or slashed ("net.ipv4.ping_group_range", "net/ipv4/…"): never a path out of /proc/sys.
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '/' && c != '_' && c != '-')
      return invalid_argument(field + ": the name may only hold letters, digits, '.', '/', '_' and '-'");
  if (name.find("..") != std::string::npos || name.find("//") != std::string::npos || name.front() == '/' ||
      name.front() == '.')
    return invalid_argument(field + ": '" + name + "' is not a sysctl name");
  return check_no_control(field + " value", value);
}

}  // namespace

Status check_pod_sandbox_config(const v1::PodSandboxConfig& c) {
  const auto& md = c.metadata();
  // These three become CNI_ARGS (K8S_POD_NAME=…;K8S_POD_NAMESPACE=…;K8S_POD_UID=…).
  for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"config.metadata.name", &md.name()},
                                     {"config.metadata.namespace", &md.namespace_()},
                                     {"config.metadata.uid", &md.uid()}}) {
    if (value->empty()) return invalid_argument(std::string(field) + ": must not be empty");
    if (Status s = check_cni_arg(field, *value); !s.ok()) return s;
  }
  if (!c.hostname().empty())
    if (Status s = check_hostname("config.hostname", c.hostname()); !s.ok()) return s;
  if (!c.log_directory().empty())
    if (Status s = check_absolute_path("config.log_directory", c.log_directory()); !s.ok()) return s;
  const auto& dns = c.dns_config();
  for (int i = 0; i < dns.servers_size(); ++i)
    if (Status s = check_ip_address(field_at("config.dns_config.servers", i), dns.servers(i)); !s.ok()) return s;
  for (int i = 0; i < dns.searches_size(); ++i)
    if (Status s = check_search_domain(field_at("config.dns_config.searches", i), dns.searches(i)); !s.ok()) return s;
  for (int i = 0; i < dns.options_size(); ++i)
    if (Status s = check_one_word(field_at("config.dns_config.options", i), dns.options(i)); !s.ok()) return s;
  for (int i = 0; i < c.port_mappings_size(); ++i) {
    const auto& p = c.port_mappings(i);
    const std::string field = field_at("config.port_mappings", i);
    if (p.container_port() < 1 || p.container_port() > 65535)
      return invalid_argument(field + ".container_port: " + std::to_string(p.container_port()) + " is not a port");
    if (p.host_port() < 0 || p.host_port() > 65535)
      return invalid_argument(field + ".host_port: " + std::to_string(p.host_port()) + " is not a port");
    if (!v1::Protocol_IsValid(p.protocol())) return invalid_argument(field + ".protocol: unknown protocol");
    if (!p.host_ip().empty())
      if (Status s = check_ip_address(field + ".host_ip", p.host_ip()); !s.ok()) return s;
  }
  if (Status s = check_map_no_nul("config.labels", c.labels()); !s.ok()) return s;
  if (Status s = check_map_no_nul("config.annotations", c.annotations()); !s.ok()) return s;
  const auto& linux = c.linux();
  if (Status s = check_no_control("config.linux.cgroup_parent", linux.cgroup_parent()); !s.ok()) return s;
  // cgroupfs form ("/a/b") or a systemd slice ("a-b.slice"): either way no ".." may climb out.
  if (("/" + linux.cgroup_parent() + "/").find("/../") != std::string::npos)
    return invalid_argument("config.linux.cgroup_parent: '" + linux.cgroup_parent() + "' has a '..' component");
  for (const auto& [name, value] : linux.sysctls())
    if (Status s = check_sysctl(name, value); !s.ok()) return s;
  const auto& sc = linux.security_context();
  if (Status s = check_profile("config.linux.security_context.seccomp", sc.seccomp()); !s.ok()) return s;
  if (Status s = check_profile("config.linux.security_context.apparmor", sc.apparmor()); !s.ok()) return s;
  return check_no_control("config.linux.security_context.seccomp_profile_path", sc.seccomp_profile_path());
}

}  // namespace berth
