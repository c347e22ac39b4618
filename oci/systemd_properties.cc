// unit_properties: a cgroup's limits as systemd unit properties, converted as runc's systemd driver
// converts them, so a pause berth started and a container runc started under the same limits get
// the same cgroup files.
#include <charconv>
#include <limits>

#include "berth/systemd_units.h"

namespace berth {

namespace {

constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kDefaultPeriod = 100000;

// cgroup v1 cpu.shares (2..262144) to v2 cpu.weight (1..10000), the mapping runc and kubelet use.
uint64_t cpu_weight_of_shares(int64_t shares) {
  if (shares < 2) shares = 2;
  if (shares > 262144) shares = 262144;
  return 1 + (static_cast<uint64_t>(shares - 2) * 9999) / 262142;
}

Result<unsigned> parse_cpu(std::string_view s, const std::string& list) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v > 8191)
    return invalid_argument("cpuset '" + list + "': '" + std::string(s) + "' is not a cpu or node number");
  return v;
}

}  // namespace

Result<std::vector<uint8_t>> cpuset_bitmask(const std::string& list) {
  std::vector<uint8_t> bits;
  std::string_view rest(list);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t dash = item.find('-');
    auto first = parse_cpu(item.substr(0, dash), list);
    if (!first.ok()) return first.status();
    auto last = dash == std::string_view::npos ? first : parse_cpu(item.substr(dash + 1), list);
    if (!last.ok()) return last.status();
    if (*last < *first) return invalid_argument("cpuset '" + list + "': a range that runs backwards");
    if (bits.size() <= *last / 8) bits.resize(*last / 8 + 1);
    for (unsigned cpu = *first; cpu <= *last; ++cpu) bits[cpu / 8] |= static_cast<uint8_t>(1u << (cpu % 8));
  }
  return bits;
}

Result<std::vector<UnitProperty>> unit_properties(const CgroupLimits& l, bool cgroup_v2) {
  std::vector<UnitProperty> p;
  if (l.memory != 0)
    p.push_back({cgroup_v2 ? "MemoryMax" : "MemoryLimit", l.memory < 0 ? kInfinity : uint64_t(l.memory)});
  if (cgroup_v2 && l.memory_swap != 0) {
    // CRI counts memory plus swap; v2's swap limit is the swap alone.
    uint64_t swap = l.memory_swap < 0 ? kInfinity : uint64_t(std::max<int64_t>(l.memory_swap - l.memory, 0));
    p.push_back({"MemorySwapMax", swap});
  }
  if (l.cpu_shares > 0) {
    if (cgroup_v2)
      p.push_back({"CPUWeight", cpu_weight_of_shares(l.cpu_shares)});
    else
      p.push_back({"CPUShares", uint64_t(l.cpu_shares)});
  }
  const uint64_t period = l.cpu_period > 0 ? uint64_t(l.cpu_period) : kDefaultPeriod;
  if (l.cpu_period > 0) p.push_back({"CPUQuotaPeriodUSec", period});
  if (l.cpu_quota != 0) {
    uint64_t per_sec = kInfinity;
    if (l.cpu_quota > 0) {
      per_sec = uint64_t(l.cpu_quota) * 1000000 / period;
      // systemd keeps the quota in whole 10 ms per second: rounded up, as runc rounds it.
      if (per_sec % 10000 != 0) per_sec = (per_sec / 10000 + 1) * 10000;
    }
    p.push_back({"CPUQuotaPerSecUSec", per_sec});
  }
  // systemd sets cpusets on the unified hierarchy only (v1's cpuset files are runc's alone there).
  for (const auto& [field, property] :
       {std::pair{&l.cpuset_cpus, "AllowedCPUs"}, {&l.cpuset_mems, "AllowedMemoryNodes"}}) {
    if (field->empty() || !cgroup_v2) continue;
    auto bits = cpuset_bitmask(*field);
    if (!bits.ok()) return bits.status();
    p.push_back({property, std::move(*bits)});
  }
  return p;
}

}  // namespace berth
