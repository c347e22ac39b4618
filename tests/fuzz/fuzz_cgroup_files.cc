// Fuzz target: the cgroup files stats/ parses (stats/include/berth/cgroup_pressure.h,
// cgroup_io.h). The first byte picks the parser (% 3: cpu/memory/io.pressure, io.stat, blkio
// throttle files), the rest is the file. What a parser accepts must survive being written back in
// the kernel's format and read again unchanged, and PSI shares must be finite and not negative.
#include <charconv>
#include <cmath>
#include <string>

#include "berth/cgroup_io.h"
#include "berth/cgroup_pressure.h"
#include "fuzz_support.h"

using namespace berth;

namespace {

std::string number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exact
  FUZZ_CHECK(ec == std::errc());
  return std::string(buf, end);
}

std::string line(const char* kind, const PsiFigures& f) {
  return std::string(kind) + " avg10=" + number(f.avg10) + " avg60=" + number(f.avg60) + " avg300=" + number(f.avg300) +
         " total=" + std::to_string(f.total_us) + "\n";
}

bool same(const std::optional<PsiFigures>& a, const std::optional<PsiFigures>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->avg10 == b->avg10 && a->avg60 == b->avg60 && a->avg300 == b->avg300 && a->total_us == b->total_us);
}

void check_share(const std::optional<PsiFigures>& f) {
  if (!f) return;
  for (double v : {f->avg10, f->avg60, f->avg300}) FUZZ_CHECK(std::isfinite(v) && v >= 0);
}

}  // namespace

BERTH_FUZZ_TARGET(cgroup_files) {
  berth::fuzz::Reader in(data, size);
  uint8_t mode = in.byte() % 3;
  std::string_view text = in.rest();
  if (mode == 0) {
    auto p = parse_pressure(text);
    if (!p) return 0;
    FUZZ_CHECK(p->some || p->full);
    check_share(p->some);
    check_share(p->full);
    std::string again;
    if (p->some) again += line("some", *p->some);
    if (p->full) again += line("full", *p->full);
    auto q = parse_pressure(again);
    FUZZ_CHECK(q && same(p->some, q->some) && same(p->full, q->full));
  } else if (mode == 1) {
    auto io = parse_io_stat(text);
    if (!io) return 0;
    std::string again = "8:0 rbytes=" + std::to_string(io->read_bytes) + " wbytes=" + std::to_string(io->write_bytes) +
                        " rios=" + std::to_string(io->reads) + " wios=" + std::to_string(io->writes) +
                        " dbytes=0 dios=0\n";
    auto back = parse_io_stat(again);
    FUZZ_CHECK(back && back->read_bytes == io->read_bytes && back->write_bytes == io->write_bytes &&
               back->reads == io->reads && back->writes == io->writes);
  } else {
    auto rw = parse_blkio_rwstat(text);
    if (!rw) return 0;
    std::string again = "8:0 Read " + std::to_string(rw->read) + "\n8:0 Write " + std::to_string(rw->write) +
                        "\n8:0 Sync 0\n8:0 Async 0\n8:0 Discard 0\n8:0 Total 0\nTotal 0\n";
    auto back = parse_blkio_rwstat(again);
    FUZZ_CHECK(back && back->read == rw->read && back->write == rw->write);
  }
  return 0;
}
