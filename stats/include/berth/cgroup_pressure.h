// Pressure stall information (PSI): the parser of a cgroup's cpu.pressure, memory.pressure and
// io.pressure (and /proc/pressure/*), bytes berth does not control, so it never trusts them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace berth {

// One line: the share of wall time stalled over 10, 60 and 300 s (percent, 0-100) and the
// cumulative stall time in microseconds, as the kernel counts it.
struct PsiFigures {
  double avg10 = 0;
  double avg60 = 0;
  double avg300 = 0;
  uint64_t total_us = 0;
};

// "some": at least one task stalled; "full": all non-idle tasks stalled at once. Kernels before
// 5.13 write no "full" line in cpu.pressure, so either may be absent.
struct Pressure {
  std::optional<PsiFigures> some;
  std::optional<PsiFigures> full;
};

// Reads "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" and "full ..." lines. A line with a
// field missing, repeated, unparsable, negative or not finite is skipped; of each kind the first
// good line counts. nullopt when no line is good: garbage reads as no PSI, never as zeros.
std::optional<Pressure> parse_pressure(std::string_view text);

}  // namespace berth
