// CRI log record formatting and line splitting; see cri_log_line.h.
#include "cri_log_line.h"

#include <string.h>

namespace berth {
namespace {

void put_digits(char* out, unsigned long value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

struct CivilDate {
  int64_t year;
  unsigned month, day;
};

// Proleptic Gregorian date of a day count since 1970-01-01, by 400-year eras counted from
// 0000-03-01 (so leap days fall at the end of a year). Done here rather than with gmtime_r, whose
// time zone machinery would add ~100 KiB of resident text to every static berth-monitor.
CivilDate civil_from_days(int64_t days) {
  int64_t shifted = days + 719468;  // days from 0000-03-01 to 1970-01-01
  int64_t era = (shifted >= 0 ? shifted : shifted - 146096) / 146097;
  auto day_of_era = static_cast<unsigned>(shifted - era * 146097);
  unsigned year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  unsigned march_month = (5 * day_of_year + 2) / 153;  // 0 = March
  CivilDate d;
  d.day = day_of_year - (153 * march_month + 2) / 5 + 1;
  d.month = march_month < 10 ? march_month + 3 : march_month - 9;
  d.year = static_cast<int64_t>(year_of_era) + era * 400 + (d.month <= 2 ? 1 : 0);
  return d;
}

}  // namespace

void format_rfc3339_nano(int64_t unix_ns, char* out) {
  int64_t secs = unix_ns / 1000000000;
  int64_t nanos = unix_ns % 1000000000;
  if (nanos < 0) {
    nanos += 1000000000;
    secs -= 1;
  }
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  CivilDate date = civil_from_days(days);
  put_digits(out, static_cast<unsigned long>(date.year), 4);
  out[4] = '-';
  put_digits(out + 5, date.month, 2);
  out[7] = '-';
  put_digits(out + 8, date.day, 2);
  out[10] = 'T';
  put_digits(out + 11, static_cast<unsigned long>(rem / 3600), 2);
  out[13] = ':';
  put_digits(out + 14, static_cast<unsigned long>(rem / 60 % 60), 2);
  out[16] = ':';
  put_digits(out + 17, static_cast<unsigned long>(rem % 60), 2);
  out[19] = '.';
  put_digits(out + 20, static_cast<unsigned long>(nanos), 9);
  out[29] = 'Z';
}

size_t format_cri_log_line(int64_t unix_ns, const char* stream, bool partial, const char* data, size_t len, char* out,
                           size_t cap) {
  size_t stream_len = strlen(stream);
  size_t total = kTimestampLength + 1 + stream_len + 3 + len + 1;
  if (cap < len + kCriLogHeaderMax || total > cap) return 0;
  char* p = out;
  format_rfc3339_nano(unix_ns, p);
  p += kTimestampLength;
  *p++ = ' ';
  memcpy(p, stream, stream_len);
  p += stream_len;
  *p++ = ' ';
  *p++ = partial ? 'P' : 'F';
  *p++ = ' ';
  if (len) memcpy(p, data, len);
  p += len;
  *p++ = '\n';
  return static_cast<size_t>(p - out);
}

void CriLineSplitter::commit(size_t n) {
  size_t scanned = len_;  // bytes already known to hold no '\n'
  len_ += n;
  size_t start = 0;
  for (;;) {
    const char* nl = static_cast<const char*>(memchr(buf_ + scanned, '\n', len_ - scanned));
    if (nl) {
      size_t line = static_cast<size_t>(nl - (buf_ + start));
      size_t content = line;
      if (content > 0 && buf_[start + content - 1] == '\r') --content;
      // A line one byte over the limit whose '\n' came in the same read is cut like any longer one.
      size_t at = 0;
      for (; content - at > line_max_; at += line_max_) emit_(ctx_, true, buf_ + start + at, line_max_);
      emit_(ctx_, false, buf_ + start + at, content - at);
      start += line + 1;
      scanned = start;
      continue;
    }
    size_t held = len_ - start;
    // Cut at line_max once a byte past the limit is known not to end the line. A '\r' just past
    // the limit waits for the next byte: with a '\n' it ends a line of exactly line_max bytes.
    bool over = held > line_max_ + 1 || (held == line_max_ + 1 && buf_[start + line_max_] != '\r');
    if (!over) break;
    emit_(ctx_, true, buf_ + start, line_max_);
    start += line_max_;
    scanned = start;
  }
  if (start > 0) {
    memmove(buf_, buf_ + start, len_ - start);
    len_ -= start;
  }
}

void CriLineSplitter::feed(const char* data, size_t n) {
  while (n > 0) {
    size_t room;
    char* dst = space(&room);
    size_t take = n < room ? n : room;
    memcpy(dst, data, take);
    commit(take);
    data += take;
    n -= take;
  }
}

void CriLineSplitter::finish() {
  if (len_ == 0) return;
  // A trailing '\r' alone was waiting to see whether a '\n' follows; at the end it is content.
  size_t first = len_ > line_max_ ? line_max_ : len_;
  emit_(ctx_, true, buf_, first);
  if (len_ > first) emit_(ctx_, true, buf_ + first, len_ - first);
  len_ = 0;
}

}  // namespace berth
