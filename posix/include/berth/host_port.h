// "host:port" as berth.toml gives listen addresses ("127.0.0.1:9090", "[::1]:0", "localhost:80").
#pragma once

#include <cstdint>
#include <string>

#include "berth/status.h"

namespace berth {

struct HostPort {
  std::string host;  // without brackets
  uint16_t port = 0;
};

// `what` names the address in errors ("metrics address").
Result<HostPort> parse_host_port(const std::string& address, const std::string& what);

}  // namespace berth
