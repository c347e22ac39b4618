// The one typed reader of JSON members for everything berthd did not just build itself: a
// registry's manifests and configs, a CNI plugin's result, a runtime's state, the image index,
// container records and sandbox checkpoints. nlohmann's at(), value() and get<>() throw on a
// missing member or another type, and get<Int>() converts any number unchecked; this reader
// checks first and keeps the first failure, naming the field, for the caller to return:
//   "field 'ips[1].address': type must be string, but is null".
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth {

class JsonFields {
 public:
  // `name` is where `object` sits ("config", "images[2]"); errors name fields below it.
  explicit JsonFields(const nlohmann::json& object, const std::string& name = "");
  // The reader keeps a reference: a temporary document would dangle.
  explicit JsonFields(nlohmann::json&&, const std::string& = "") = delete;
  JsonFields(const JsonFields&) = delete;
  JsonFields& operator=(const JsonFields&) = delete;

  // A reader of a nested object that reports into this one's status: the first failure anywhere
  // in the document is the one returned.
  JsonFields nested(const nlohmann::json& object, const std::string& name);
  JsonFields nested(nlohmann::json&&, const std::string&) = delete;

  // Whether an optional member is there to read: present and not null (the optional reads below
  // give their fallback otherwise).
  bool has(const char* key) const { return find(key) != nullptr; }
  // A member of any type, null included, for a value the caller checks itself (one written in
  // more than one form, a subtree passed on as it is): nullptr only when absent.
  const nlohmann::json* member(const char* key) const;

  // Optional members: absent or null gives the fallback, another type the fallback and an error.
  std::string string(const char* key, std::string fallback = "");
  bool boolean(const char* key, bool fallback);
  template <class Int>
  Int integer(const char* key, Int fallback) {
    const nlohmann::json* v = find(key);
    return v ? checked_integer<Int>(*v, key).value_or(fallback) : fallback;
  }
  const nlohmann::json* object(const char* key) { return typed(find(key), key, "object", &nlohmann::json::is_object); }
  const nlohmann::json* array(const char* key) { return typed(find(key), key, "array", &nlohmann::json::is_array); }
  std::vector<std::string> strings(const char* key);
  std::map<std::string, std::string> string_map(const char* key);
  template <class Int>
  std::vector<Int> integers(const char* key) {
    std::vector<Int> out;
    const nlohmann::json* a = array(key);
    for (size_t i = 0; a && i < a->size(); ++i)
      if (auto v = checked_integer<Int>((*a)[i], std::string(key) + "[" + std::to_string(i) + "]")) out.push_back(*v);
    return out;
  }

  // Required members: absent is an error ("field 'id': missing"); null is a value of the wrong
  // type. Each returns what the optional read would on failure.
  const nlohmann::json* required(const char* key);
  std::string required_string(const char* key);
  bool required_boolean(const char* key);
  template <class Int>
  Int required_integer(const char* key) {
    const nlohmann::json* v = required(key);
    return v ? checked_integer<Int>(*v, key).value_or(Int{}) : Int{};
  }
  const nlohmann::json* required_object(const char* key);
  const nlohmann::json* required_array(const char* key);

  // Records a failure the caller found in a value it read ("unknown phase 'x'").
  void fail(const std::string& key, const std::string& why);

  bool ok() const { return status_->ok(); }
  const Status& status() const { return *status_; }

 private:
  JsonFields(const nlohmann::json& object, std::string path, Status* status);
  const nlohmann::json* find(const char* key) const;
  const nlohmann::json* typed(const nlohmann::json* v, const std::string& key, const char* want,
                              bool (nlohmann::json::*is)() const noexcept);
  void wrong_type(const std::string& key, const char* want, const nlohmann::json& got);

  // An integer that fits `Int`: a float, a string or a number out of range is an error.
  template <class Int>
  std::optional<Int> checked_integer(const nlohmann::json& v, const std::string& key) {
    if (!v.is_number_integer()) {
      wrong_type(key, std::is_signed_v<Int> ? "integer" : "unsigned integer", v);
      return std::nullopt;
    }
    bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(std::numeric_limits<Int>::max())
                                       : v.get<int64_t>() >= int64_t(std::numeric_limits<Int>::min()) &&
                                             (uint64_t(std::numeric_limits<Int>::max()) > uint64_t(INT64_MAX) ||
                                              v.get<int64_t>() <= int64_t(std::numeric_limits<Int>::max()));
    if (!fits) {
      fail(key, "integer " + v.dump() + " out of range");
      return std::nullopt;
    }
    return v.is_number_unsigned() ? static_cast<Int>(v.get<uint64_t>()) : static_cast<Int>(v.get<int64_t>());
  }

  const nlohmann::json& j_;
  std::string path_;  // "config." — the prefix of field names in errors
  Status own_;
  Status* status_;
};

}  // namespace berth
