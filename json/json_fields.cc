// JsonFields: type checks before every read, and the first failure kept with its field's name.
#include "berth/json_fields.h"

namespace berth {

JsonFields::JsonFields(const nlohmann::json& object, const std::string& name)
    : JsonFields(object, name.empty() ? "" : name + ".", nullptr) {}

JsonFields::JsonFields(const nlohmann::json& object, std::string path, Status* status)
    : j_(object), path_(std::move(path)), status_(status ? status : &own_) {
  if (!j_.is_object() && status_->ok()) {
    std::string what = std::string("type must be object, but is ") + j_.type_name();
    *status_ = invalid_argument(path_.empty() ? what : "field '" + path_.substr(0, path_.size() - 1) + "': " + what);
  }
}

JsonFields JsonFields::nested(const nlohmann::json& object, const std::string& name) {
  return JsonFields(object, path_ + name + ".", status_);
}

const nlohmann::json* JsonFields::find(const char* key) const {
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(key);
  return it == j_.end() || it->is_null() ? nullptr : &*it;
}

const nlohmann::json* JsonFields::member(const char* key) const {
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(key);
  return it == j_.end() ? nullptr : &*it;
}

const nlohmann::json* JsonFields::typed(const nlohmann::json* v, const std::string& key, const char* want,
                                        bool (nlohmann::json::*is)() const noexcept) {
  if (!v) return nullptr;
  if (!(v->*is)()) {
    wrong_type(key, want, *v);
    return nullptr;
  }
  return v;
}

std::string JsonFields::string(const char* key, std::string fallback) {
  const nlohmann::json* v = typed(find(key), key, "string", &nlohmann::json::is_string);
  return v ? v->get<std::string>() : fallback;
}

bool JsonFields::boolean(const char* key, bool fallback) {
  const nlohmann::json* v = typed(find(key), key, "boolean", &nlohmann::json::is_boolean);
  return v ? v->get<bool>() : fallback;
}

std::vector<std::string> JsonFields::strings(const char* key) {
  std::vector<std::string> out;
  const nlohmann::json* a = array(key);
  for (size_t i = 0; a && i < a->size(); ++i) {
    const nlohmann::json& v = (*a)[i];
    if (v.is_string())
      out.push_back(v.get<std::string>());
    else
      wrong_type(std::string(key) + "[" + std::to_string(i) + "]", "string", v);
  }
  return out;
}

std::map<std::string, std::string> JsonFields::string_map(const char* key) {
  std::map<std::string, std::string> out;
  const nlohmann::json* o = object(key);
  if (!o) return out;
  for (const auto& [k, v] : o->items()) {
    if (v.is_string())
      out[k] = v.get<std::string>();
    else
      wrong_type(std::string(key) + "." + k, "string", v);
  }
  return out;
}

const nlohmann::json* JsonFields::required(const char* key) {
  if (!j_.is_object()) return nullptr;
  auto it = j_.find(key);
  if (it == j_.end()) {
    fail(key, "missing");
    return nullptr;
  }
  return &*it;  // null included: the typed reads below report it as the wrong type
}

std::string JsonFields::required_string(const char* key) {
  const nlohmann::json* v = typed(required(key), key, "string", &nlohmann::json::is_string);
  return v ? v->get<std::string>() : "";
}

bool JsonFields::required_boolean(const char* key) {
  const nlohmann::json* v = typed(required(key), key, "boolean", &nlohmann::json::is_boolean);
  return v ? v->get<bool>() : false;
}

const nlohmann::json* JsonFields::required_object(const char* key) {
  return typed(required(key), key, "object", &nlohmann::json::is_object);
}

const nlohmann::json* JsonFields::required_array(const char* key) {
  return typed(required(key), key, "array", &nlohmann::json::is_array);
}

void JsonFields::fail(const std::string& key, const std::string& why) {
  if (status_->ok()) *status_ = invalid_argument("field '" + path_ + key + "': " + why);
}

void JsonFields::wrong_type(const std::string& key, const char* want, const nlohmann::json& got) {
  fail(key, std::string("type must be ") + want + ", but is " + got.type_name());
}

}  // namespace berth
