// Block IO of a cgroup, summed over devices: the parsers of cgroup v2's io.stat and cgroup v1's
// blkio.throttle.io_service_bytes / io_serviced, bytes berth does not control.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace berth {

struct IoCounters {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t reads = 0;   // completed read requests
  uint64_t writes = 0;  // completed write requests
};

// io.stat: one "MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=.. dbytes=.. dios=.." line per device
// (other keys ignored). Empty text is a cgroup that did no IO (zeros); nullopt when a line is not
// of that shape, so a file that is not io.stat is never read as figures. Sums saturate.
std::optional<IoCounters> parse_io_stat(std::string_view text);

// blkio.throttle.io_service_bytes or io_serviced: "MAJ:MIN Read N" (Write, Sync, Async, Discard,
// Total) per device and a last "Total N". Returns the Read and Write sums over devices; nullopt
// on a line of another shape.
struct ReadWrite {
  uint64_t read = 0;
  uint64_t write = 0;
};
std::optional<ReadWrite> parse_blkio_rwstat(std::string_view text);

}  // namespace berth
