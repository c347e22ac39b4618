// CheckpointWrite: a RunPodSandbox's first, durable checkpoint written on a thread of its own, so
// that its two fsyncs overlap the bundle, the shm mount, the netns and CNI ADD's own durable
// intent instead of coming before all of them. What is made before the record is known durable
// is what a start sweeps without one (bundles and netns pins no checkpoint owns, CNI cache
// entries of no sandbox): nothing that needs the record runs before wait() said OK.
#pragma once

#include <future>
#include <string>

#include "berth/sandbox_checkpoint.h"

namespace berth {

class CheckpointWrite {
 public:
  CheckpointWrite() = default;
  ~CheckpointWrite();
  CheckpointWrite(const CheckpointWrite&) = delete;
  CheckpointWrite& operator=(const CheckpointWrite&) = delete;

  // Starts write_checkpoint(dir, cp) (durable); written on the caller's thread when no thread
  // can be had.
  void start(const std::string& dir, SandboxCheckpoint cp);
  // The write's outcome; waits for it. May be called again: it then returns the same outcome.
  Status wait();

 private:
  std::future<Status> pending_;
  Status outcome_;
};

}  // namespace berth
