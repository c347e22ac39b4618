// NetworkSetup: a RunPodSandbox's CNI ADD on a thread of its own, from the moment the sandbox's
// checkpoint exists. The network hook records its intent while the netns is being made and runs
// its first plugin once the netns is pinned; everything else of the sandbox (its files, the
// pause) is made beside it. It is settled (the netns outcome given, the ADD waited for) before
// any undo, whose DEL must never race it, and at the latest by its destructor.
#pragma once

#include <future>
#include <string>
#include <vector>

#include "berth/sandbox_manager.h"

namespace berth {

class NetworkSetup {
 public:
  NetworkSetup() = default;
  ~NetworkSetup();
  NetworkSetup(const NetworkSetup&) = delete;
  NetworkSetup& operator=(const NetworkSetup&) = delete;

  // Starts network.setup(request) on a thread (the sandbox's thread when none can be had: it then
  // runs in finish()). request.netns_ready is this object's.
  void start(SandboxNetwork& network, SandboxNetworkRequest request);
  bool running() const { return result_.valid(); }

  // The netns is pinned (OK) or could not be made. Only the first outcome counts.
  void netns_made(Status outcome);
  // The pod IPs; waits for the ADD. A netns outcome not given yet is given as "called off".
  Result<std::vector<std::string>> finish();
  // For an undo: called off when it has not started its plugins, waited for in any case. An ADD
  // failure other than the call-off is logged (the run's own failure is the one returned).
  void abandon(const std::string& sandbox_id);

 private:
  std::promise<Status> netns_;
  bool netns_given_ = false;
  std::future<Result<std::vector<std::string>>> result_;
};

}  // namespace berth
