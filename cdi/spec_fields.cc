// The strict member reader of spec documents; see spec_fields.h.
#include "spec_fields.h"

#include <cctype>

#include "cdi_names.h"

namespace berth::cdi {
namespace {

// A YAML 1.1 integer as the reference's decoder reads one; nullopt when `s` is not one or does not
// fit in int64.
std::optional<int64_t> yaml_integer(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16, s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && s[1] == 'o') {
    base = 8, s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8, s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : 99;
    if (d >= base) return std::nullopt;
    if (value > (uint64_t(INT64_MAX) + 1 - d) / base) return std::nullopt;
    value = value * base + d;
  }
  if (negative) return value == uint64_t(INT64_MAX) + 1 ? INT64_MIN : -static_cast<int64_t>(value);
  if (value > uint64_t(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(value);
}

}  // namespace

bool same_field_name(std::string_view key, std::string_view name) {
  if (key.size() != name.size()) return false;
  for (size_t i = 0; i < key.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(key[i])) != std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

const char* json_kind(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_float: return "a fractional number";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    default: return "a value of another kind";
  }
}

void FieldReader::fail(const std::string& where, const std::string& why) {
  if (error_.empty()) error_ = (where.empty() ? "" : where + ": ") + why;
}

std::optional<FieldReader::Object> FieldReader::object(const nlohmann::json& v, const std::string& where,
                                                       std::initializer_list<const char*> known) {
  if (!v.is_object()) {
    fail(where, std::string("expected an object, got ") + json_kind(v));
    return std::nullopt;
  }
  Object o{where, {}};
  std::map<std::string, std::string> spelled;  // canonical name -> the document's spelling
  for (const auto& [key, value] : v.items()) {
    const char* name = nullptr;
    for (const char* k : known)
      if (key == k) name = k;
    for (const char* k : known)
      if (!name && same_field_name(key, k)) name = k;
    if (!name) {
      fail(o.path(printable(key).c_str()), "unknown field");
      return std::nullopt;
    }
    if (auto [it, fresh] = spelled.emplace(name, key); !fresh) {
      fail(o.path(name), "given twice, as '" + printable(it->second) + "' and '" + printable(key) + "'");
      return std::nullopt;
    }
    if (!value.is_null()) o.members[name] = &value;
  }
  return o;
}

std::optional<std::string> FieldReader::string_value(const nlohmann::json& v, const std::string& where) {
  if (!v.is_string()) {
    fail(where, std::string("expected a string, got ") + json_kind(v));
    return std::nullopt;
  }
  const std::string& s = v.get_ref<const std::string&>();
  // A NUL would cut the string short where it becomes a C string (a path given to stat, say).
  if (s.find('\0') != std::string::npos) {
    fail(where, "holds a NUL byte");
    return std::nullopt;
  }
  return s;
}

std::optional<int64_t> FieldReader::integer_value(const nlohmann::json& v, const std::string& where, int64_t min,
                                                  int64_t max) {
  std::optional<int64_t> n;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) {
      fail(where, "integer " + v.dump() + " out of range " + std::to_string(min) + ".." + std::to_string(max));
      return std::nullopt;
    }
    n = v.get<int64_t>();
  } else if (yaml_ && v.is_string()) {
    n = yaml_integer(v.get_ref<const std::string&>());
    if (!n) {
      fail(where, "expected an integer, got '" + printable(v.get_ref<const std::string&>()) + "'");
      return std::nullopt;
    }
  } else {
    fail(where, std::string("expected an integer, got ") + json_kind(v));
    return std::nullopt;
  }
  if (*n < min || *n > max) {
    fail(where, "integer " + std::to_string(*n) + " out of range " + std::to_string(min) + ".." + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<std::string> FieldReader::string(const Object& o, const char* name, bool required) {
  const nlohmann::json* v = o.get(name);
  if (!v) {
    if (required) fail(o.path(name), "missing");
    return std::nullopt;
  }
  return string_value(*v, o.path(name));
}

const nlohmann::json* FieldReader::array(const Object& o, const char* name, bool required) {
  const nlohmann::json* v = o.get(name);
  if (!v) {
    if (required) fail(o.path(name), "missing");
    return nullptr;
  }
  if (!v->is_array()) {
    fail(o.path(name), std::string("expected an array, got ") + json_kind(*v));
    return nullptr;
  }
  return v;
}

std::vector<std::string> FieldReader::strings(const Object& o, const char* name) {
  std::vector<std::string> out;
  const nlohmann::json* a = array(o, name);
  for (size_t i = 0; a && i < a->size(); ++i)
    if (auto s = string_value((*a)[i], o.path(name) + "[" + std::to_string(i) + "]")) out.push_back(std::move(*s));
  return out;
}

std::map<std::string, std::string> FieldReader::string_map(const Object& o, const char* name) {
  std::map<std::string, std::string> out;
  const nlohmann::json* v = o.get(name);
  if (!v) return out;
  if (!v->is_object()) {
    fail(o.path(name), std::string("expected an object, got ") + json_kind(*v));
    return out;
  }
  for (const auto& [key, value] : v->items())
    if (auto s = string_value(value, o.path(name) + "." + printable(key))) out[key] = std::move(*s);
  return out;
}

std::optional<int64_t> FieldReader::integer(const Object& o, const char* name, int64_t min, int64_t max) {
  const nlohmann::json* v = o.get(name);
  return v ? integer_value(*v, o.path(name), min, max) : std::nullopt;
}

}  // namespace berth::cdi
