// CDI names: the kind "vendor/class" of a spec, a device's name, and the fully qualified
// "vendor/class=name" a container asks for, with the CDI spec's character and length rules; and
// the OCI hook names a CDI hook may use.
#pragma once

#include <string>
#include <string_view>

#include "berth/status.h"

namespace berth::cdi {

// `s` fit for an error line: at most 80 bytes; control bytes, non-ASCII bytes and quotes as \xNN.
std::string printable(std::string_view s);

// A parser library's error text fit for a Status: control and non-ASCII bytes (a JSON or YAML
// library may quote the input's bytes) as \xNN, at most 400 bytes.
std::string safe_message(std::string_view s);

// "" when valid, else why not (lowercase, for "<field>: <why>").
std::string vendor_name_error(std::string_view vendor);
std::string class_name_error(std::string_view cls);
std::string device_name_error(std::string_view name);

// Splits a kind "vendor/class"; "" when valid, else why not.
std::string split_kind(std::string_view kind, std::string* vendor, std::string* cls);

// prestart, createRuntime, createContainer, startContainer, poststart, poststop.
bool is_hook_name(std::string_view name);
inline constexpr const char* kHookNames =
    "prestart, createRuntime, createContainer, startContainer, poststart, poststop";

struct QualifiedName {
  std::string kind;  // "vendor/class"
  std::string name;
};

// INVALID_ARGUMENT naming `name` unless it is "vendor/class=name" with each part valid.
Result<QualifiedName> parse_qualified_name(const std::string& name);

}  // namespace berth::cdi
