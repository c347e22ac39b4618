// Strict, typed reads of a spec document's members, as the CDI reference's decoder reads them:
// member names match without regard to ASCII case (Go's encoding/json does, so "additionalGIDs",
// as the CDI spec text spells it, is "additionalGids"), an unknown member is an error, and a null
// member is one not given. In a YAML document every scalar is a string (spec_document.h), so an
// integer field reads the YAML 1.1 integer forms the reference's decoder reads: decimal, 0x hex,
// 0o or leading-0 octal. The first failure is kept with its field's path:
//   "devices[1].containerEdits.deviceNodes[0].major: expected an integer, got a string".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace berth::cdi {

class FieldReader {
 public:
  // One object's members under their canonical names (as in `known`), null ones left out.
  struct Object {
    std::string where;  // "devices[1].containerEdits"; "" at the top
    std::map<std::string, const nlohmann::json*> members;
    const nlohmann::json* get(const char* name) const {
      auto it = members.find(name);
      return it == members.end() ? nullptr : it->second;
    }
    std::string path(const char* name) const { return where.empty() ? name : where + "." + name; }
  };

  explicit FieldReader(bool yaml) : yaml_(yaml) {}

  // nullopt (and the failure kept) when `v` is not an object or has a member not in `known`.
  std::optional<Object> object(const nlohmann::json& v, const std::string& where,
                               std::initializer_list<const char*> known);

  // Members; a missing required one is a failure ("missing"), the others give nullopt / empty.
  std::optional<std::string> string(const Object& o, const char* name, bool required = false);
  std::vector<std::string> strings(const Object& o, const char* name);
  std::map<std::string, std::string> string_map(const Object& o, const char* name);
  std::optional<int64_t> integer(const Object& o, const char* name, int64_t min, int64_t max);
  const nlohmann::json* array(const Object& o, const char* name, bool required = false);

  // Values (array elements).
  std::optional<std::string> string_value(const nlohmann::json& v, const std::string& where);
  std::optional<int64_t> integer_value(const nlohmann::json& v, const std::string& where, int64_t min, int64_t max);

  // Keeps the first failure: "<where>: <why>".
  void fail(const std::string& where, const std::string& why);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  bool yaml_;
  std::string error_;
};

// Whether a document's member name `key` names the field `name` (ASCII case ignored).
bool same_field_name(std::string_view key, std::string_view name);

// "a string", "an array", ... for "expected X, got Y".
const char* json_kind(const nlohmann::json& v);

}  // namespace berth::cdi
