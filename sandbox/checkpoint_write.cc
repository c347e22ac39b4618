// CheckpointWrite; see checkpoint_write.h.
#include "checkpoint_write.h"

#include <system_error>

#include <spdlog/spdlog.h>

#include "berth/fault_point.h"

namespace berth {

CheckpointWrite::~CheckpointWrite() { (void)wait(); }

void CheckpointWrite::start(const std::string& dir, SandboxCheckpoint cp) {
  auto write = [dir, cp = std::move(cp)] {
    Status s = write_checkpoint(dir, cp);
    if (s.ok()) fault_point(FaultPoint::run_pod_sandbox_checkpoint_created);
    return s;
  };
  try {
    pending_ = std::async(std::launch::async, write);  // a copy: a throw leaves `write` whole
  } catch (const std::system_error& e) {
    spdlog::warn("sandbox checkpoint written before the rest of the sandbox: {}", e.what());
    pending_ = std::async(std::launch::deferred, std::move(write));
  }
}

Status CheckpointWrite::wait() {
  if (pending_.valid()) outcome_ = pending_.get();
  return outcome_;
}

}  // namespace berth
