// Whether this node can checkpoint and restore containers: CRIU (3.16 or later, what restoring into
// a pod needs) present and `criu check` content with the kernel. Probed once, on a thread of its
// own from berthd's start (the check takes seconds where it works and must not hold the start
// up); CheckpointContainer, a restore and Status ask for the answer.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "berth/status.h"

namespace berth {

struct CriuProbeResult {
  bool done = false;  // false while the probe runs
  bool usable = false;
  std::string version;  // "3.17.1", when criu ran
  std::string reason;   // why not, when not usable
};

class CriuSupport {
 public:
  // Starts the probe of `criu_binary` (a name looked up in PATH, or a path).
  static std::shared_ptr<CriuSupport> probe(std::string criu_binary);

  // OK when usable; FAILED_PRECONDITION with the reason otherwise. Waits up to `wait` for a probe
  // still running (UNAVAILABLE when it is still not done).
  Status usable(std::chrono::milliseconds wait = std::chrono::seconds(60)) const;
  CriuProbeResult result() const;
  const std::string& binary() const { return binary_; }

  struct State;
  CriuSupport(std::string binary, std::shared_ptr<State> state)
      : binary_(std::move(binary)), state_(std::move(state)) {}

 private:
  std::string binary_;
  std::shared_ptr<State> state_;
};

// What CRIU says went wrong in its output or log: the last line naming an Error, else the last line.
std::string criu_error_line(const std::string& text);

// "Version: 3.17.1\n" (criu --version) as 31701; 0 when it does not read.
int criu_version_number(const std::string& version_output, std::string* version = nullptr);

}  // namespace berth
