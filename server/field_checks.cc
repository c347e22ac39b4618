// See field_checks.h. Rejected bytes are shown escaped (\n, \x00), so the error message itself
// never carries them into a log line.
#include "field_checks.h"

#include <arpa/inet.h>

#include <cstdio>

namespace berth {
namespace {

std::string shown(const std::string& value) {
  std::string out;
  for (unsigned char c : value.substr(0, 200)) {
    if (c == '\n')
      out += "\\n";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else
      out += static_cast<char>(c);
  }
  return value.size() > 200 ? out + "..." : out;
}

Status bad(const std::string& field, const std::string& value, const std::string& why) {
  return invalid_argument(field + ": '" + shown(value) + "' " + why);
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The components of a path, split at '/'; empty ones included (a "//" or a trailing '/').
template <class F>
bool each_component(const std::string& path, size_t from, F&& f) {
  size_t start = from;
  for (size_t i = from; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!f(path.substr(start, i - start), i == path.size())) return false;
      start = i + 1;
    }
  }
  return true;
}

bool is_label(const std::string& l) {
  if (l.empty() || l.size() > 63 || l.front() == '-' || l.back() == '-') return false;
  for (char c : l)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  return true;
}

bool labels_ok(const std::string& name) {
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); ++i)
    if (i == name.size() || name[i] == '.') {
      if (!is_label(name.substr(start, i - start))) return false;
      start = i + 1;
    }
  return true;
}

}  // namespace

Status check_no_nul(const std::string& field, const std::string& value) {
  if (value.find('\0') != std::string::npos) return bad(field, value, "contains a NUL byte");
  return ok_status();
}

Status check_no_control(const std::string& field, const std::string& value) {
  for (unsigned char c : value)
    if (is_control(c)) return bad(field, value, c == 0 ? "contains a NUL byte" : "contains a control character");
  return ok_status();
}

Status check_one_word(const std::string& field, const std::string& value) {
  if (Status s = check_no_control(field, value); !s.ok()) return s;
  if (value.find(' ') != std::string::npos) return bad(field, value, "contains a space");
  return ok_status();
}

Status check_absolute_path(const std::string& field, const std::string& value) {
  if (Status s = check_no_control(field, value); !s.ok()) return s;
  if (value.empty() || value[0] != '/') return bad(field, value, "is not an absolute path");
  bool clean = each_component(value, 1, [](const std::string& c, bool) { return c != "." && c != ".."; });
  if (!clean) return bad(field, value, "has a '.' or '..' component");
  return ok_status();
}

Status check_relative_path(const std::string& field, const std::string& value) {
  if (Status s = check_no_control(field, value); !s.ok()) return s;
  if (value.empty()) return bad(field, value, "is empty");
  if (value[0] == '/') return bad(field, value, "is absolute; it must be relative");
  bool clean = each_component(value, 0, [](const std::string& c, bool) { return !c.empty() && c != "." && c != ".."; });
  if (!clean) return bad(field, value, "has an empty, '.' or '..' component (it must stay below its directory)");
  return ok_status();
}

Status check_hostname(const std::string& field, const std::string& value) {
  if (Status s = check_no_control(field, value); !s.ok()) return s;
  if (value.size() > 64) return bad(field, value, "is longer than 64 characters");
  if (!labels_ok(value))
    return bad(field, value,
               "is not a host name (dot-separated labels of letters, digits and '-', 1-63 characters each)");
  return ok_status();
}

Status check_search_domain(const std::string& field, const std::string& value) {
  if (Status s = check_no_control(field, value); !s.ok()) return s;
  std::string name = !value.empty() && value.back() == '.' ? value.substr(0, value.size() - 1) : value;
  if (name.size() > 253 || !labels_ok(name)) return bad(field, value, "is not a DNS domain name");
  return ok_status();
}

Status check_ip_address(const std::string& field, const std::string& value) {
  if (Status s = check_no_control(field, value); !s.ok()) return s;
  unsigned char buf[16];
  if (::inet_pton(AF_INET, value.c_str(), buf) == 1 || ::inet_pton(AF_INET6, value.c_str(), buf) == 1)
    return ok_status();
  return bad(field, value, "is not an IPv4 or IPv6 address");
}

Status check_cni_arg(const std::string& field, const std::string& value) {
  if (Status s = check_no_control(field, value); !s.ok()) return s;
  if (value.find_first_of(";=") != std::string::npos)
    return bad(field, value, "contains ';' or '=', which would change the CNI_ARGS passed to network plugins");
  return ok_status();
}

}  // namespace berth
