// Typed reads of JSON that came from outside berthd: a registry's manifests, image configs and
// answers, and the image index on disk. nlohmann's value() and get<>() throw type_error when a
// member has another type, and a throw that reaches an rpc handler ends the daemon; these check
// the type first and keep the first mismatch, naming the field, for the caller to return.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth {

class JsonFields {
 public:
  // `path` prefixes field names in errors: "config." gives "field 'config.User': ...".
  explicit JsonFields(const nlohmann::json& object, std::string path = "") : j_(object), path_(std::move(path)) {
    if (!j_.is_object()) {
      std::string name = path_.empty() ? "" : "'" + path_.substr(0, path_.size() - 1) + "' ";
      status_ = invalid_argument(name + "must be an object, but is " + std::string(j_.type_name()));
    }
  }

  // Every member is optional: absent or null gives the fallback (or nothing); present with
  // another type, the fallback and an error.
  std::string string(const char* key, std::string fallback = "") {
    const nlohmann::json* v = member(key, "string", &nlohmann::json::is_string);
    return v ? v->get<std::string>() : fallback;
  }
  int64_t integer(const char* key, int64_t fallback) {
    const nlohmann::json* v = member(key, "integer", &nlohmann::json::is_number_integer);
    return v ? v->get<int64_t>() : fallback;
  }
  uint64_t unsigned_integer(const char* key, uint64_t fallback) {
    const nlohmann::json* v = member(key, "unsigned integer", &nlohmann::json::is_number_unsigned);
    return v ? v->get<uint64_t>() : fallback;
  }
  bool boolean(const char* key, bool fallback) {
    const nlohmann::json* v = member(key, "boolean", &nlohmann::json::is_boolean);
    return v ? v->get<bool>() : fallback;
  }
  const nlohmann::json* object(const char* key) { return member(key, "object", &nlohmann::json::is_object); }
  const nlohmann::json* array(const char* key) { return member(key, "array", &nlohmann::json::is_array); }
  std::vector<std::string> strings(const char* key) {
    std::vector<std::string> out;
    const nlohmann::json* a = array(key);
    if (!a) return out;
    for (size_t i = 0; i < a->size(); ++i) {
      const nlohmann::json& v = (*a)[i];
      if (!v.is_string()) {
        fail(std::string(key) + "[" + std::to_string(i) + "]", "string", v);
        continue;
      }
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  std::map<std::string, std::string> string_map(const char* key) {
    std::map<std::string, std::string> out;
    const nlohmann::json* o = object(key);
    if (!o) return out;
    for (const auto& [k, v] : o->items()) {
      if (!v.is_string()) {
        fail(std::string(key) + "." + k, "string", v);
        continue;
      }
      out[k] = v.get<std::string>();
    }
    return out;
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

 private:
  const nlohmann::json* member(const char* key, const char* want, bool (nlohmann::json::*is)() const noexcept) {
    if (!j_.is_object()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return nullptr;
    if (!((*it).*is)()) {
      fail(key, want, *it);
      return nullptr;
    }
    return &*it;
  }
  void fail(const std::string& key, const char* want, const nlohmann::json& got) {
    if (status_.ok())
      status_ = invalid_argument("field '" + path_ + key + "': type must be " + want + ", but is " + got.type_name());
  }

  const nlohmann::json& j_;
  std::string path_;
  Status status_;
};

}  // namespace berth
