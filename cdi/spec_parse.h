// One CDI spec file read and validated: its kind, its spec-level edits and its devices. This is
// the parser of outside bytes (the fuzz target tests/fuzz/fuzz_cdi.cc drives it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "berth/cdi.h"

namespace berth::cdi {

struct SpecDevice {
  std::string name;
  CdiContainerEdits edits;
};

struct SpecFile {
  std::string path;
  std::string version;  // as written
  std::string kind;     // "vendor/class"
  CdiContainerEdits edits;
  std::vector<SpecDevice> devices;  // at least one, names unique, in file order
};

// `path` names the file in errors and picks the format: ".json" is JSON, anything else YAML.
// INVALID_ARGUMENT "<path>: <field>: <why>" when the file is not a valid CDI spec of a version
// berth reads. `names`, when given, receives the qualified names of the devices the document
// names (as far as it can be read) even when it is invalid, so that a request for one can say
// why it is unavailable.
Result<SpecFile> parse_spec(std::string_view bytes, const std::string& path, std::vector<std::string>* names = nullptr);

}  // namespace berth::cdi
