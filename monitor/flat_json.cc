// A scanner for one JSON object's top-level members; see flat_json.h.
#include "flat_json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace berth {
namespace {

const char* skip_ws(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  return p;
}

// p at an opening quote; returns the position after the closing quote, or nullptr.
const char* skip_string(const char* p, const char* end) {
  for (++p; p < end; ++p) {
    if (*p == '\\') {
      ++p;
      continue;
    }
    if (*p == '"') return p + 1;
  }
  return nullptr;
}

// Any value; nested objects and arrays are skipped whole.
const char* skip_value(const char* p, const char* end) {
  if (p >= end) return nullptr;
  if (*p == '"') return skip_string(p, end);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < end) {
      if (*p == '"') {
        p = skip_string(p, end);
        if (!p) return nullptr;
        continue;
      }
      if (*p == '{' || *p == '[') ++depth;
      if (*p == '}' || *p == ']') {
        if (--depth == 0) return p + 1;
      }
      ++p;
    }
    return nullptr;
  }
  while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') ++p;
  return p;
}

size_t put_utf8(unsigned cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xc0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3f));
    return 2;
  }
  out[0] = static_cast<char>(0xe0 | (cp >> 12));
  out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
  out[2] = static_cast<char>(0x80 | (cp & 0x3f));
  return 3;
}

}  // namespace

bool find_json_field(const char* text, size_t len, const char* key, JsonField* out) {
  const char* end = text + len;
  const char* p = skip_ws(text, end);
  if (p >= end || *p != '{') return false;
  p = skip_ws(p + 1, end);
  size_t key_len = strlen(key);
  while (p < end && *p == '"') {
    const char* k = p + 1;
    const char* after = skip_string(p, end);
    if (!after) return false;
    bool match = static_cast<size_t>(after - 1 - k) == key_len && memcmp(k, key, key_len) == 0;
    p = skip_ws(after, end);
    if (p >= end || *p != ':') return false;
    p = skip_ws(p + 1, end);
    const char* v = p;
    p = skip_value(p, end);
    if (!p) return false;
    if (match) {
      out->is_string = *v == '"';
      out->begin = out->is_string ? v + 1 : v;
      out->len = static_cast<size_t>(p - v) - (out->is_string ? 2 : 0);
      return true;
    }
    p = skip_ws(p, end);
    if (p < end && *p == ',') p = skip_ws(p + 1, end);
  }
  return false;
}

size_t json_string_value(const JsonField& f, char* out, size_t cap) {
  if (cap == 0) return 0;
  size_t n = 0;
  const char* p = f.begin;
  const char* end = f.begin + f.len;
  char tmp[4];
  while (p < end) {
    size_t k = 1;
    if (*p != '\\') {
      tmp[0] = *p++;
    } else if (++p < end) {
      char e = *p++;
      switch (e) {
        case 'n': tmp[0] = '\n'; break;
        case 't': tmp[0] = '\t'; break;
        case 'r': tmp[0] = '\r'; break;
        case 'b': tmp[0] = '\b'; break;
        case 'f': tmp[0] = '\f'; break;
        case 'u': {
          if (end - p < 4) {  // a cut escape ends the value; the output is still terminated below
            p = end;
            k = 0;
            break;
          }
          char hex[5] = {p[0], p[1], p[2], p[3], 0};
          p += 4;
          k = put_utf8(static_cast<unsigned>(strtoul(hex, nullptr, 16)), tmp);
          break;
        }
        default: tmp[0] = e;  // \" \\ \/
      }
    } else {
      break;
    }
    if (n + k >= cap) break;
    memcpy(out + n, tmp, k);
    n += k;
  }
  out[n] = 0;
  return n;
}

bool json_int_value(const JsonField& f, long long* out) {
  if (f.is_string || f.len == 0 || f.len > 24) return false;
  char tmp[25];
  memcpy(tmp, f.begin, f.len);
  tmp[f.len] = 0;
  char* endp = nullptr;
  long long v = strtoll(tmp, &endp, 10);
  if (*endp != 0) return false;
  *out = v;
  return true;
}

size_t escape_json(const char* s, size_t n, char* out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  if (cap == 0) return 0;
  size_t o = 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char tmp[6];
    size_t k = 2;
    tmp[0] = '\\';
    if (c == '"' || c == '\\')
      tmp[1] = static_cast<char>(c);
    else if (c == '\n')
      tmp[1] = 'n';
    else if (c == '\t')
      tmp[1] = 't';
    else if (c == '\r')
      tmp[1] = 'r';
    else if (c < 0x20) {
      memcpy(tmp, "\\u00", 4);
      tmp[4] = hex[c >> 4];
      tmp[5] = hex[c & 15];
      k = 6;
    } else {
      tmp[0] = static_cast<char>(c);
      k = 1;
    }
    if (o + k >= cap) break;
    memcpy(out + o, tmp, k);
    o += k;
  }
  out[o] = 0;
  return o;
}

}  // namespace berth
