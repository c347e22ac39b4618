// The PSI line parser; see cgroup_pressure.h. A kernel line is "some avg10=0.12 avg60=0.05
// avg300=0.01 total=123456"; each field must be present once and well formed.
#include "berth/cgroup_pressure.h"

#include <charconv>
#include <cmath>

#include "text_fields.h"

namespace berth {

namespace {

std::optional<double> parse_share(std::string_view s) {
  // from_chars also takes "inf", "nan" and "-0.5": the kernel writes none of them.
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The fields after "some"/"full"; nullopt unless avg10, avg60, avg300 and total each came once.
std::optional<PsiFigures> parse_figures(std::string_view rest) {
  PsiFigures f;
  unsigned seen = 0;  // one bit per field
  for (std::string_view field = text_fields::next_field(rest); !field.empty(); field = text_fields::next_field(rest)) {
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    unsigned bit = 0;
    if (key == "total") {
      auto v = text_fields::parse_u64(value);
      if (!v) return std::nullopt;
      f.total_us = *v;
      bit = 1;
    } else {
      double* avg = key == "avg10" ? &f.avg10 : key == "avg60" ? &f.avg60 : key == "avg300" ? &f.avg300 : nullptr;
      if (!avg) continue;  // a field a later kernel may add
      auto v = parse_share(value);
      if (!v) return std::nullopt;
      *avg = *v;
      bit = key == "avg10" ? 2 : key == "avg60" ? 4 : 8;
    }
    if (seen & bit) return std::nullopt;
    seen |= bit;
  }
  if (seen != 15) return std::nullopt;
  return f;
}

}  // namespace

std::optional<Pressure> parse_pressure(std::string_view text) {
  Pressure p;
  while (!text.empty()) {
    std::string_view line = text_fields::next_line(text);
    std::string_view kind = text_fields::next_field(line);
    std::optional<PsiFigures>* slot = kind == "some" ? &p.some : kind == "full" ? &p.full : nullptr;
    if (!slot || slot->has_value()) continue;
    *slot = parse_figures(line);
  }
  if (!p.some && !p.full) return std::nullopt;
  return p;
}

}  // namespace berth
