// Per-interface traffic counters of a network namespace, read from /proc/<pid>/net/dev of a
// process inside it (the pod's pause): no setns, no netlink socket per call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct InterfaceCounters {
  std::string name;
  uint64_t rx_bytes = 0;
  uint64_t rx_errors = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_errors = 0;
};

// Every interface but loopback, in the file's order.
Result<std::vector<InterfaceCounters>> read_net_dev(int pid);
// The parser, for a file's text.
std::vector<InterfaceCounters> parse_net_dev(const std::string& text);

}  // namespace berth
