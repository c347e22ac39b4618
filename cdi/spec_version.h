// The CDI spec versions berth reads, 0.3.0 to 0.8.0, and the version each later feature needs: a
// file must declare at least the version of every feature it uses, as the CDI reference checks.
#pragma once

#include <string>
#include <string_view>

namespace berth::cdi {

inline constexpr const char* kOldestVersion = "0.3.0";
inline constexpr const char* kNewestVersion = "0.8.0";

// The minor number of a version berth reads ("0.5.0" and, as the reference allows, "v0.5.0"
// give 5); -1 for any other.
int version_minor(std::string_view version);

// The highest version a spec's features need, and the first field that needs it.
class VersionNeeds {
 public:
  // Features and the version that added each (CDI SPEC.md's table).
  void mount_type(const std::string& where) { need(4, where); }          // mounts[].type
  void device_digit_first(const std::string& where) { need(5, where); }  // a device name starting with a digit
  void device_host_path(const std::string& where) { need(5, where); }    // deviceNodes[].hostPath
  void annotations(const std::string& where) { need(6, where); }
  void dotted_class(const std::string& where) { need(6, where); }  // a '.' in the kind's class
  void additional_gids(const std::string& where) { need(7, where); }

  // "" when a file declaring `minor` may use everything seen, else why not.
  std::string check(int minor) const;

 private:
  void need(int minor, const std::string& where) {
    if (minor > minor_) minor_ = minor, where_ = where;
  }
  int minor_ = 3;
  std::string where_;
};

}  // namespace berth::cdi
