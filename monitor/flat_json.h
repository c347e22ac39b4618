// Just enough JSON for the monitor's two flat formats: reading a field of one object (the exit
// file, a runtime's JSON log line) and escaping a string. No allocation, so berth-monitor stays
// small. Persists nothing.
#pragma once

#include <stddef.h>

namespace berth {

struct JsonField {
  const char* begin = nullptr;  // raw value text; for strings, without the quotes
  size_t len = 0;
  bool is_string = false;
};

// Finds the top-level member `key` of the object in text. False when absent or malformed.
bool find_json_field(const char* text, size_t len, const char* key, JsonField* out);

// A string field's value with escapes resolved (\uXXXX as UTF-8), cut at cap - 1 bytes;
// always NUL-terminated. Returns the length written.
size_t json_string_value(const JsonField& f, char* out, size_t cap);

// A number field as an integer. False when not an integer.
bool json_int_value(const JsonField& f, long long* out);

// s as JSON string content (no quotes), cut at cap - 1 bytes; NUL-terminated. Returns length.
size_t escape_json(const char* s, size_t n, char* out, size_t cap);

}  // namespace berth
