// The files a pod's containers bind-mount: resolv.conf from the pod's DNS config (or the host's),
// hostname and hosts.
#pragma once

#include <string>
#include <vector>

#include "berth/sandbox_manager.h"
#include "berth/status.h"

namespace berth {

// With no servers, searches or options the host's resolv.conf is copied.
Status write_resolv_conf(const std::string& path, const PodDns& dns,
                         const std::string& host_resolv = "/etc/resolv.conf");
Status write_hostname_file(const std::string& path, const std::string& hostname);
Status write_hosts_file(const std::string& path, const std::string& hostname);

}  // namespace berth
