// See host_port.h.
#include "berth/host_port.h"

#include <cstdlib>

namespace berth {

Result<HostPort> parse_host_port(const std::string& address, const std::string& what) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return invalid_argument(what + " '" + address + "' is not host:port");
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string port = address.substr(colon + 1);
  char* end = nullptr;
  unsigned long n = port.empty() ? 70000 : std::strtoul(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || n > 65535)
    return invalid_argument(what + " '" + address + "': port is not a number 0-65535");
  return HostPort{host, static_cast<uint16_t>(n)};
}

}  // namespace berth
