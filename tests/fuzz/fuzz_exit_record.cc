// Fuzz target: the monitor's flat JSON (monitor/flat_json.h, exit_record.h): the exit file berthd
// reads after a container ended (parse_exit_record, read_exit_file), the runtime's JSON log lines
// berth-monitor scans for the last error (find_json_field on "level" and "msg"), and
// escape_json. What parses must format and parse back the same; what is escaped must read back.
#include <cstring>
#include <string>

#include "../../monitor/exit_record.h"
#include "../../monitor/flat_json.h"
#include "berth/monitor.h"
#include "fuzz_support.h"

using namespace berth;

namespace {

void exit_file(const std::string& text) {
  ExitRecord rec;
  bool ok = parse_exit_record(text.data(), text.size(), &rec);
  std::string path = fuzz::scratch_dir() + "/exit";
  fuzz::write_file(path, text);
  auto info = read_exit_file(path);
  if (text.size() <= 16384) FUZZ_CHECK(info.ok() == ok);
  if (!ok) return;
  FUZZ_CHECK(memchr(rec.reason, 0, sizeof rec.reason) != nullptr);
  static char formatted[sizeof rec.reason * 6 + 256];
  size_t n = format_exit_record(rec, formatted, sizeof formatted);
  FUZZ_CHECK(n > 0 && n < sizeof formatted && formatted[n - 1] == '\n');
  ExitRecord back;
  FUZZ_CHECK(parse_exit_record(formatted, n, &back));
  FUZZ_CHECK(back.exit_code == rec.exit_code && back.signal == rec.signal && back.exited_at_ns == rec.exited_at_ns);
  FUZZ_CHECK(strcmp(back.reason, rec.reason) == 0);
}

// berth-monitor's scan of the runtime's log (runtime_create.cc): one JSON object per line.
void runtime_log(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t len = (nl == std::string::npos ? text.size() : nl) - start;
    std::string line = text.substr(start, len);  // its own buffer, so ASan sees the line's end
    JsonField level, msg;
    if (find_json_field(line.data(), line.size(), "level", &level)) {
      FUZZ_CHECK(level.begin >= line.data() && level.begin + level.len <= line.data() + line.size());
    }
    if (find_json_field(line.data(), line.size(), "msg", &msg) && msg.is_string) {
      FUZZ_CHECK(msg.begin >= line.data() && msg.begin + msg.len <= line.data() + line.size());
      char out[1024];
      memset(out, 'x', sizeof out);
      size_t n = json_string_value(msg, out, sizeof out);
      FUZZ_CHECK(n < sizeof out);
      FUZZ_CHECK(out[n] == 0);
      long long v;
      (void)json_int_value(msg, &v);
    }
    start += len + 1;
  }
}

void escape(const std::string& text) {
  std::string raw = text.substr(0, text.find('\0'));
  std::string json(raw.size() * 6 + 1, '\0');
  size_t n = escape_json(raw.data(), raw.size(), json.data(), json.size());
  FUZZ_CHECK(n < json.size() && json[n] == 0);
  std::string object = "{\"reason\":\"" + json.substr(0, n) + "\"}";
  JsonField f;
  FUZZ_CHECK(find_json_field(object.data(), object.size(), "reason", &f) && f.is_string);
  std::string back(raw.size() + 1, '\0');
  size_t m = json_string_value(f, back.data(), back.size());
  FUZZ_CHECK(m == raw.size() && memcmp(back.data(), raw.data(), m) == 0);
}

}  // namespace

BERTH_FUZZ_TARGET(exit_record) {
  fuzz::Reader in(data, size);
  uint8_t mode = in.byte();
  std::string text(in.rest());
  switch (mode % 3) {
    case 0: exit_file(text); break;
    case 1: runtime_log(text); break;
    default: escape(text);
  }
  return 0;
}
