// The exit file's format, shared by berth-monitor (writes it) and berthd (reads it):
//   {"version":1,"exit_code":N,"signal":S,"exited_at":<ns since epoch>,"reason":"..."}
// The file itself is written atomically by the monitor before it reports an exit or a failed create.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace berth {

inline constexpr int kExitFileVersion = 1;

struct ExitRecord {
  int exit_code = -1;  // 128 + signal when killed; -1 when the container was never created
  int signal = 0;
  int64_t exited_at_ns = 0;
  char reason[1024] = {};  // NUL-terminated
};

// JSON text plus '\n'; returns its length (reasons too long for cap are cut).
size_t format_exit_record(const ExitRecord& r, char* out, size_t cap);

// False unless the text is a version-1 record with every field.
bool parse_exit_record(const char* text, size_t len, ExitRecord* out);

}  // namespace berth
