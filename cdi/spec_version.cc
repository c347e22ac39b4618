// CDI spec versions; see spec_version.h.
#include "spec_version.h"

namespace berth::cdi {

int version_minor(std::string_view v) {
  if (!v.empty() && v[0] == 'v') v.remove_prefix(1);
  if (v.size() != 5 || v.substr(0, 2) != "0." || v.substr(3) != ".0") return -1;
  int minor = v[2] - '0';
  return minor >= 3 && minor <= 8 ? minor : -1;
}

std::string VersionNeeds::check(int minor) const {
  if (minor >= minor_) return "";
  return "version 0." + std::to_string(minor) + ".0 does not have " + where_ + " (it needs 0." +
         std::to_string(minor_) + ".0 or later)";
}

}  // namespace berth::cdi
