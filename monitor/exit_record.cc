// Exit file encoding; see exit_record.h.
#include "exit_record.h"

#include <stdio.h>

#include "flat_json.h"

namespace berth {

size_t format_exit_record(const ExitRecord& r, char* out, size_t cap) {
  char reason[sizeof r.reason * 6];
  size_t i = 0;
  while (i < sizeof r.reason && r.reason[i]) ++i;
  escape_json(r.reason, i, reason, sizeof reason);
  int n = snprintf(out, cap, "{\"version\":%d,\"exit_code\":%d,\"signal\":%d,\"exited_at\":%lld,\"reason\":\"%s\"}\n",
                   kExitFileVersion, r.exit_code, r.signal, static_cast<long long>(r.exited_at_ns), reason);
  if (n < 0) return 0;
  return static_cast<size_t>(n) < cap ? static_cast<size_t>(n) : cap - 1;
}

bool parse_exit_record(const char* text, size_t len, ExitRecord* out) {
  JsonField f;
  long long v;
  if (!find_json_field(text, len, "version", &f) || !json_int_value(f, &v) || v != kExitFileVersion) return false;
  if (!find_json_field(text, len, "exit_code", &f) || !json_int_value(f, &v)) return false;
  out->exit_code = static_cast<int>(v);
  if (!find_json_field(text, len, "signal", &f) || !json_int_value(f, &v)) return false;
  out->signal = static_cast<int>(v);
  if (!find_json_field(text, len, "exited_at", &f) || !json_int_value(f, &v)) return false;
  out->exited_at_ns = v;
  if (!find_json_field(text, len, "reason", &f) || !f.is_string) return false;
  json_string_value(f, out->reason, sizeof out->reason);
  return true;
}

}  // namespace berth
