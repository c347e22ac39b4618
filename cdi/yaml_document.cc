// YAML spec documents through yaml-cpp, turned into the JSON tree the spec reader walks. yaml-cpp
// resolves an alias to the node it names (even to an enclosing one: "&a [*a]" is a cycle), so the
// walk bounds its depth and the number of nodes it makes, or a small file could expand without
// end. Strings must be UTF-8: nlohmann (and so the OCI spec these end up in) refuses to dump others.
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "cdi_names.h"
#include "spec_document.h"

namespace berth::cdi {
namespace {

bool valid_utf8(std::string_view s) {
  static constexpr uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};  // below these a form is overlong
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xe0) == 0xc0) {
      extra = 1, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    // Surrogates and code points past U+10FFFF are not UTF-8 either.
    if (cp < kLeast[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

class YamlToJson {
 public:
  // "" on success, else why the node (or one below it) cannot be read.
  std::string convert(const YAML::Node& node, int depth, nlohmann::json& out) {
    if (depth > kMaxDocumentDepth)
      return at(node, "nested deeper than " + std::to_string(kMaxDocumentDepth) + " levels");
    if (++nodes_ > kMaxYamlNodes)
      return at(node, "more than " + std::to_string(kMaxYamlNodes) + " nodes once aliases are expanded");
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined: out = nullptr; return "";
      case YAML::NodeType::Scalar:
        // Aliases share one node but each use copies its string: the copies are bounded too.
        if ((bytes_ += node.Scalar().size()) > 2 * kMaxSpecBytes)
          return at(node, "more than " + std::to_string((2 * kMaxSpecBytes) >> 20) +
                              " MiB of strings once aliases are expanded");
        if (!valid_utf8(node.Scalar())) return at(node, "a string is not valid UTF-8");
        out = node.Scalar();
        return "";
      case YAML::NodeType::Sequence:
        out = nlohmann::json::array();
        for (const YAML::Node& item : node) {
          nlohmann::json value;
          if (std::string why = convert(item, depth + 1, value); !why.empty()) return why;
          out.push_back(std::move(value));
        }
        return "";
      case YAML::NodeType::Map: {
        out = nlohmann::json::object();
        for (const auto& member : node) {
          if (!member.first.IsScalar()) return at(member.first, "a mapping key is not a string");
          const std::string& key = member.first.Scalar();
          if (!valid_utf8(key)) return at(member.first, "a mapping key is not valid UTF-8");
          if (out.contains(key)) return at(member.first, "key '" + printable(key) + "' appears twice in one mapping");
          nlohmann::json value;
          if (std::string why = convert(member.second, depth + 1, value); !why.empty()) return why;
          out[key] = std::move(value);
        }
        return "";
      }
    }
    return at(node, "unknown node type");
  }

 private:
  static std::string at(const YAML::Node& node, const std::string& why) {
    YAML::Mark m = node.Mark();
    return m.is_null() ? why : "line " + std::to_string(m.line + 1) + ": " + why;
  }

  size_t nodes_ = 0;
  size_t bytes_ = 0;
};

}  // namespace

Result<nlohmann::json> parse_yaml_document(std::string_view bytes) {
  try {
    YAML::Node root = YAML::Load(std::string(bytes));
    nlohmann::json out;
    if (std::string why = YamlToJson().convert(root, 0, out); !why.empty()) return invalid_argument(why);
    return out;
  } catch (const YAML::Exception& e) {
    return invalid_argument((e.mark.is_null() ? "" : "line " + std::to_string(e.mark.line + 1) + ": ") + e.msg);
  } catch (const std::exception& e) {
    return invalid_argument(std::string("unreadable YAML: ") + e.what());
  }
}

}  // namespace berth::cdi
