// Fuzz target: CRI log records from a container's output (monitor/cri_log_line.h) as berth-monitor
// makes them: bytes arrive in reads of any size into the splitter's buffer, every record is
// formatted into a line buffer of the monitor's size. Checked: every line is well formed
// ("<RFC3339Nano> stdout <P|F> <content>\n", content at most line_max bytes and without '\n'),
// and the records put back together give the output exactly (with "\r\n" line ends as "\n").
// The first bytes choose line_max (small ones reach the cuts), the timestamp and the read sizes.
#include <cstring>
#include <string>
#include <vector>

#include "cri_log_line.h"
#include "fuzz_support.h"

using namespace berth;

namespace {

struct Sink {
  size_t line_max = 0;
  int64_t now = 0;
  std::vector<char> line;
  std::string rebuilt;
  size_t records = 0;
};

void check_timestamp(const char* ts) {
  for (size_t i = 0; i < kTimestampLength; ++i) {
    char want = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':' : i == 19 ? '.' : i == 29 ? 'Z' : 0;
    if (want)
      FUZZ_CHECK(ts[i] == want);
    else
      FUZZ_CHECK(ts[i] >= '0' && ts[i] <= '9');
  }
}

void emit(void* ctx, bool partial, const char* data, size_t len) {
  auto* s = static_cast<Sink*>(ctx);
  FUZZ_CHECK(len <= s->line_max);
  FUZZ_CHECK(!memchr(data, '\n', len));
  size_t n = format_cri_log_line(s->now, "stdout", partial, data, len, s->line.data(), s->line.size());
  FUZZ_CHECK(n == kTimestampLength + sizeof(" stdout P ") - 1 + len + 1);
  const char* l = s->line.data();
  check_timestamp(l);
  FUZZ_CHECK(memcmp(l + kTimestampLength, partial ? " stdout P " : " stdout F ", 10) == 0);
  FUZZ_CHECK(memcmp(l + kTimestampLength + 10, data, len) == 0 && l[n - 1] == '\n');
  s->rebuilt.append(data, len);
  if (!partial) s->rebuilt += '\n';
  ++s->records;
}

}  // namespace

BERTH_FUZZ_TARGET(cri_log) {
  fuzz::Reader in(data, size);
  Sink sink;
  uint8_t choice = in.byte();
  sink.line_max = choice < 16 ? 16384 : 1 + choice % 64;
  uint64_t ns = 0;
  for (int i = 0; i < 8; ++i) ns = ns << 8 | in.byte();
  sink.now = static_cast<int64_t>(ns);
  sink.line.resize(sink.line_max + kCriLogHeaderMax);
  std::vector<char> storage(CriLineSplitter::storage_size(sink.line_max));
  CriLineSplitter splitter(storage.data(), sink.line_max, emit, &sink);

  std::string output;
  while (!in.empty()) {
    // One read(): at most the room the splitter offers.
    size_t want = 1 + in.byte() % 40;
    std::string_view chunk = in.take(want);
    while (!chunk.empty()) {
      size_t room = 0;
      char* dst = splitter.space(&room);
      FUZZ_CHECK(room > 0);
      size_t n = chunk.size() < room ? chunk.size() : room;
      memcpy(dst, chunk.data(), n);
      splitter.commit(n);
      output.append(chunk.substr(0, n));
      chunk.remove_prefix(n);
    }
  }
  splitter.finish();
  FUZZ_CHECK(splitter.pending() == 0);

  std::string expected;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] == '\r' && i + 1 < output.size() && output[i + 1] == '\n') continue;
    expected += output[i];
  }
  FUZZ_CHECK(sink.rebuilt == expected);
  return 0;
}
