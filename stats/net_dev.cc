// /proc/net/dev: two header lines, then "  name: rx_bytes rx_packets rx_errs ... tx_bytes ...".
#include "berth/net_dev.h"

#include <cerrno>
#include <sstream>

#include "kernel_files.h"

namespace berth {

std::vector<InterfaceCounters> parse_net_dev(const std::string& text) {
  std::vector<InterfaceCounters> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;  // the two header lines have '|' and no ':'
    size_t start = line.find_first_not_of(' ');
    InterfaceCounters c;
    c.name = line.substr(start, colon - start);
    if (c.name == "lo") continue;
    std::istringstream fields(line.substr(colon + 1));
    uint64_t v[16] = {};
    int n = 0;
    while (n < 16 && fields >> v[n]) n++;
    if (n < 16) continue;
    // receive: bytes packets errs drop fifo frame compressed multicast; transmit: bytes packets errs ...
    c.rx_bytes = v[0];
    c.rx_errors = v[2];
    c.tx_bytes = v[8];
    c.tx_errors = v[10];
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<InterfaceCounters>> read_net_dev(int pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/net/dev";
  auto text = kernel_files::read_text(path);
  if (!text) return errno_status(errno, "read " + path, errno == ENOENT ? Code::not_found : Code::internal);
  return parse_net_dev(*text);
}

}  // namespace berth
