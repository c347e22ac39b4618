// Checks of single request fields that become a path, a line of a file berth writes, an argument or
// an environment entry. Each returns INVALID_ARGUMENT naming the field (as the CRI request spells
// it, e.g. "config.dns_config.servers[0]") and the reason, or OK.
#pragma once

#include <string>

#include "berth/status.h"

namespace berth {

// No NUL byte: execve, the kernel and C strings would cut the value short.
Status check_no_nul(const std::string& field, const std::string& value);
// No byte below 0x20 and no DEL: a newline or tab would add a line or a word to a file berth writes.
Status check_no_control(const std::string& field, const std::string& value);
// check_no_control, and no space either (a value that is one word of a line).
Status check_one_word(const std::string& field, const std::string& value);
// Absolute, with no "." or ".." component and no control character.
Status check_absolute_path(const std::string& field, const std::string& value);
// Relative, non-empty, with no "." or ".." component, no empty component and no control character:
// a path that cannot leave the directory it is taken under.
Status check_relative_path(const std::string& field, const std::string& value);
// A host name: dot-separated labels of letters, digits and '-' (not first or last), each 1-63
// characters, 64 in all at most (the kernel's limit).
Status check_hostname(const std::string& field, const std::string& value);
// A DNS search domain: a host name of up to 253 characters, which may end with '.'.
Status check_search_domain(const std::string& field, const std::string& value);
// An IPv4 or IPv6 address in text form.
Status check_ip_address(const std::string& field, const std::string& value);
// A value that goes into CNI_ARGS ("K=V;K=V"): no ';' or '=' and no control character.
Status check_cni_arg(const std::string& field, const std::string& value);

// "field[i]", as the CRI request spells an element.
inline std::string field_at(const std::string& field, int i) { return field + "[" + std::to_string(i) + "]"; }

// check_no_nul of each element of a repeated string field.
template <class List>
Status check_each_no_nul(const std::string& field, const List& list) {
  for (int i = 0; i < list.size(); ++i)
    if (Status s = check_no_nul(field_at(field, i), list.Get(i)); !s.ok()) return s;
  return ok_status();
}

// check_no_nul of each key and value of a map field (labels, annotations).
template <class Map>
Status check_map_no_nul(const std::string& field, const Map& m) {
  for (const auto& [k, v] : m) {
    if (Status s = check_no_nul(field + " key", k); !s.ok()) return s;
    if (Status s = check_no_nul(field + "[" + k + "]", v); !s.ok()) return s;
  }
  return ok_status();
}

}  // namespace berth
