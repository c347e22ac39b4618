// What an OCI runtime binary says it can do: `<runtime> features` (runc 1.1+, crun 1.9+) gives
// the mount options it knows (berth uses a runtime's own `rro` where it has one) and the
// namespaces it handles; a runtime without that command (crun 1.8, Debian 12's) is asked its
// `--version` instead, to tell a runtime from a binary that does not run. The cache of the
// answers, one per handler, is the handler table's (runtime_handlers.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace berth {

struct RuntimeFeatures {
  bool responds = false;  // the binary answered `features` or, failing that, `--version`
  bool answered = false;  // `features` printed a document that reads
  // What `--version` says the runtime is: "runc", "crun", or "" for anything else (gVisor's runsc,
  // Kata, a Wasm or VM flavour of crun...). Only runc and crun run containers as namespaced host
  // processes, which berth's exec helper and pause launcher make themselves.
  std::string identity;
  std::vector<std::string> mount_options;
  std::optional<std::vector<std::string>> namespaces;  // linux.namespaces, when the document lists them

  bool has_mount_option(const std::string& option) const;
  // Whether the runtime can join a user namespace by path, with the spec's mappings: listed, or,
  // for a runtime that lists no namespaces, assumed (runc and crun both can; it is all berth asks).
  bool joins_user_namespace() const;
};

// The features document as the runtime prints it (a parameter for tests).
RuntimeFeatures parse_runtime_features(const std::string& json_text);

// RuntimeFeatures::identity from `--version`'s output and the binary's path: crun run as `krun`
// (its libkrun VM mode) or built with a Wasm or VM handler (+WASM..., +LIBKRUN) is none of the two.
std::string runtime_identity(const std::string& version_text, const std::string& binary);

// Runs `binary` (a path) with `features` and with `--version`, each bounded by a timeout. Execs: the table calls it at
// start and when the binary changed, never per call.
RuntimeFeatures ask_runtime_features(const std::string& binary);

}  // namespace berth
