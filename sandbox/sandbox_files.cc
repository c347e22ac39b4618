// resolv.conf lines follow resolv.conf(5): nameserver per server, one search line, one options line.
#include "sandbox_files.h"

#include <sstream>

#include "berth/atomic_file.h"
#include "berth/file_text.h"

namespace berth {

PodDns pod_dns(const runtime::v1::DNSConfig& config) {
  return {{config.servers().begin(), config.servers().end()},
          {config.searches().begin(), config.searches().end()},
          {config.options().begin(), config.options().end()}};
}

Status write_resolv_conf(const std::string& path, const PodDns& dns, const std::string& host_resolv) {
  std::string out;
  if (dns.servers.empty() && dns.searches.empty() && dns.options.empty()) {
    out = read_text_file(host_resolv);
  } else {
    for (const auto& s : dns.servers) out += "nameserver " + s + "\n";
    if (!dns.searches.empty()) {
      out += "search";
      for (const auto& s : dns.searches) out += " " + s;
      out += "\n";
    }
    if (!dns.options.empty()) {
      out += "options";
      for (const auto& o : dns.options) out += " " + o;
      out += "\n";
    }
  }
  return write_file_atomically(path, out, 0644, false).context("write resolv.conf");
}

Status write_hostname_file(const std::string& path, const std::string& hostname) {
  return write_file_atomically(path, hostname + "\n", 0644, false).context("write hostname");
}

Status write_hosts_file(const std::string& path, const std::string& hostname) {
  std::string out =
      "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n"
      "fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n";
  if (!hostname.empty()) out += "127.0.1.1\t" + hostname + "\n";
  return write_file_atomically(path, out, 0644, false).context("write hosts");
}

}  // namespace berth
