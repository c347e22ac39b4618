// JSON spec documents through nlohmann's callback parser, which also lets us see each object's
// member names: nlohmann keeps the last of two equal names silently, the CDI reference refuses
// such a file, and so do we.
#include <set>
#include <string>
#include <vector>

#include "cdi_names.h"
#include "spec_document.h"

namespace berth::cdi {

Result<nlohmann::json> parse_json_document(std::string_view bytes) {
  using json = nlohmann::json;
  std::vector<std::set<std::string>> names;  // member names of each open object
  std::string problem;
  auto watch = [&](int depth, json::parse_event_t event, json& parsed) {
    if (!problem.empty()) return false;  // discard the rest: the document is refused anyway
    if (depth > kMaxDocumentDepth) problem = "nested deeper than " + std::to_string(kMaxDocumentDepth) + " levels";
    switch (event) {
      case json::parse_event_t::object_start: names.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!names.empty()) names.pop_back();
        break;
      case json::parse_event_t::key:
        if (!names.empty() && parsed.is_string() && !names.back().insert(parsed.get_ref<const std::string&>()).second)
          problem = "member '" + printable(parsed.get_ref<const std::string&>()) + "' appears twice in one object";
        break;
      default: break;
    }
    return problem.empty();
  };
  try {
    json doc = json::parse(bytes.begin(), bytes.end(), watch);
    if (!problem.empty()) return invalid_argument(problem);
    return doc;
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 7: syntax error ..."
    std::string what = e.what();
    size_t at = what.find("at line ");
    return invalid_argument(problem.empty() ? (at == std::string::npos ? what : what.substr(at + 3)) : problem);
  } catch (const std::exception& e) {
    return invalid_argument(std::string("unreadable JSON: ") + e.what());
  }
}

}  // namespace berth::cdi
