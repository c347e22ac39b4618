// The io.stat and blkio parsers; see cgroup_io.h. Both sum per-device lines: CRI's figures and
// cAdvisor's names are per container, and a container's IO may reach several disks.
#include "berth/cgroup_io.h"

#include "text_fields.h"

namespace berth {

namespace tf = text_fields;

std::optional<IoCounters> parse_io_stat(std::string_view text) {
  IoCounters sum;
  while (!text.empty()) {
    std::string_view line = tf::next_line(text);
    std::string_view device = tf::next_field(line);
    if (device.empty()) continue;  // a blank line
    if (!tf::is_device(device)) return std::nullopt;
    for (std::string_view field = tf::next_field(line); !field.empty(); field = tf::next_field(line)) {
      size_t eq = field.find('=');
      if (eq == std::string_view::npos) return std::nullopt;
      std::string_view key = field.substr(0, eq);
      uint64_t* into = key == "rbytes"   ? &sum.read_bytes
                       : key == "wbytes" ? &sum.write_bytes
                       : key == "rios"   ? &sum.reads
                       : key == "wios"   ? &sum.writes
                                         : nullptr;
      if (!into) continue;  // dbytes, dios, and what io.cost or a later kernel adds
      auto v = tf::parse_u64(field.substr(eq + 1));
      if (!v) return std::nullopt;
      *into = tf::saturating_add(*into, *v);
    }
  }
  return sum;
}

std::optional<ReadWrite> parse_blkio_rwstat(std::string_view text) {
  ReadWrite sum;
  while (!text.empty()) {
    std::string_view line = tf::next_line(text);
    std::string_view first = tf::next_field(line);
    if (first.empty()) continue;
    if (first == "Total") {  // the sum over devices the kernel appends
      if (!tf::parse_u64(tf::next_field(line)) || !tf::next_field(line).empty()) return std::nullopt;
      continue;
    }
    std::string_view op = tf::next_field(line);
    auto v = tf::parse_u64(tf::next_field(line));
    if (!tf::is_device(first) || op.empty() || !v || !tf::next_field(line).empty()) return std::nullopt;
    if (op == "Read") sum.read = tf::saturating_add(sum.read, *v);
    if (op == "Write") sum.write = tf::saturating_add(sum.write, *v);
  }
  return sum;
}

}  // namespace berth
