// A spec file's bytes as a JSON tree, from JSON (nlohmann) or YAML (yaml-cpp), before any CDI
// meaning is read from it. Both parsers catch everything their library throws.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "berth/status.h"

namespace berth::cdi {

// Bounds on what a spec document may cost to read: a CDI spec is a few levels deep and, for the
// largest GPU nodes, a few hundred KiB.
inline constexpr size_t kMaxSpecBytes = 8 << 20;
inline constexpr int kMaxDocumentDepth = 64;
inline constexpr size_t kMaxYamlNodes = 1 << 18;  // after alias expansion

// INVALID_ARGUMENT "line L: why" (no file name: the caller adds it) on a syntax error, a duplicate
// member name, nesting deeper than kMaxDocumentDepth, or (YAML) a non-string key, invalid
// UTF-8 or more than kMaxYamlNodes nodes once aliases are expanded.
Result<nlohmann::json> parse_json_document(std::string_view bytes);

// YAML: the first document. A plain null (~, null, empty) is JSON null; every other scalar,
// plain or quoted, is a JSON string (YAML has no types of its own here: the reader of a field
// decides whether "5" is the integer 5, see spec_fields.h).
Result<nlohmann::json> parse_yaml_document(std::string_view bytes);

}  // namespace berth::cdi
