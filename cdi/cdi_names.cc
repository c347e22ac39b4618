// CDI name rules (see cdi_names.h): vendor and class begin with a letter, end with a letter or
// digit and hold letters, digits, '-', '_' and '.' between; a device name may also begin with a
// digit and hold ':'. The CDI spec caps a vendor (a DNS subdomain) at 253 characters and a class
// at 63.
#include "cdi_names.h"

#include "berth/cdi.h"

namespace berth::cdi {
namespace {

bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool alnum(char c) { return letter(c) || (c >= '0' && c <= '9'); }

std::string escaped(std::string_view s, size_t max, bool quote) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s.substr(0, max)) {
    if (c < 0x20 || c >= 0x7f || (quote && c == '\'')) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace

// Control bytes and quotes would garble the error line, a non-ASCII byte could make it invalid
// UTF-8 (which nlohmann refuses to dump), and a long name would drown it.
std::string printable(std::string_view s) { return escaped(s, 80, true); }

std::string safe_message(std::string_view s) { return escaped(s, 400, false); }

namespace {

std::string segment_error(std::string_view s, const char* what, size_t max_len, bool digit_first,
                          std::string_view extra) {
  if (s.empty()) return std::string(what) + " is empty";
  if (s.size() > max_len)
    return std::string(what) + " '" + printable(s) + "' is longer than " + std::to_string(max_len) + " characters";
  if (!(digit_first ? alnum(s.front()) : letter(s.front())))
    return std::string(what) + " '" + printable(s) + "' must begin with a letter" + (digit_first ? " or digit" : "");
  if (!alnum(s.back())) return std::string(what) + " '" + printable(s) + "' must end with a letter or digit";
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.' && extra.find(c) == std::string_view::npos)
      return std::string(what) + " '" + printable(s) + "' holds a character other than letters, digits, '-', '_', '.'" +
             (extra.empty() ? "" : " and ':'");
  return "";
}

}  // namespace

std::string vendor_name_error(std::string_view vendor) { return segment_error(vendor, "vendor", 253, false, ""); }
std::string class_name_error(std::string_view cls) { return segment_error(cls, "class", 63, false, ""); }
// No length cap in the CDI spec; 255 keeps a name usable in a file name and an error line.
std::string device_name_error(std::string_view name) { return segment_error(name, "device name", 255, true, ":"); }

std::string split_kind(std::string_view kind, std::string* vendor, std::string* cls) {
  size_t slash = kind.find('/');
  if (slash == std::string_view::npos) return "'" + printable(kind) + "' is not of the form vendor/class";
  std::string_view v = kind.substr(0, slash), c = kind.substr(slash + 1);
  if (std::string why = vendor_name_error(v); !why.empty()) return why;
  if (std::string why = class_name_error(c); !why.empty()) return why;
  *vendor = std::string(v);
  *cls = std::string(c);
  return "";
}

bool is_hook_name(std::string_view name) {
  for (const char* hook : {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"})
    if (name == hook) return true;
  return false;
}

Result<QualifiedName> parse_qualified_name(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return invalid_argument("CDI device '" + printable(name) +
                            "': not a fully qualified name (vendor/class=name): " + why);
  };
  size_t eq = name.find('=');
  if (eq == std::string::npos) return bad("no '='");
  std::string vendor, cls;
  if (std::string why = split_kind(std::string_view(name).substr(0, eq), &vendor, &cls); !why.empty()) return bad(why);
  std::string_view dev = std::string_view(name).substr(eq + 1);
  if (std::string why = device_name_error(dev); !why.empty()) return bad(why);
  return QualifiedName{vendor + "/" + cls, std::string(dev)};
}

}  // namespace berth::cdi

namespace berth {

Status check_cdi_device_name(const std::string& name) { return cdi::parse_qualified_name(name).status(); }

Result<std::vector<std::string>> cdi_annotation_devices(const std::map<std::string, std::string>& annotations) {
  static const std::string kPrefix = "cdi.k8s.io/";
  std::vector<std::string> out;
  for (auto it = annotations.lower_bound(kPrefix); it != annotations.end() && it->first.rfind(kPrefix, 0) == 0; ++it) {
    size_t start = 0;
    for (;;) {
      size_t comma = it->second.find(',', start);
      std::string name = it->second.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (Status s = check_cdi_device_name(name); !s.ok()) return s.context("annotation " + cdi::printable(it->first));
      out.push_back(std::move(name));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace berth
