// NetworkSetup; see network_setup.h.
#include "network_setup.h"

#include <system_error>

#include <spdlog/spdlog.h>

#include "berth/tracer.h"

namespace berth {

namespace {
const char* const kCalledOff = "the sandbox's run failed before its netns was made";
}

NetworkSetup::~NetworkSetup() {
  if (running()) abandon("");
}

void NetworkSetup::start(SandboxNetwork& network, SandboxNetworkRequest request) {
  request.netns_ready = netns_.get_future().share();
  const std::string id = request.id;
  // The plugins run on another thread, inside RunPodSandbox's span all the same.
  auto setup = [&network, request = std::move(request), parent = tracing::current()] {
    ScopedTraceParent trace(parent);
    return network.setup(request);
  };
  try {
    result_ = std::async(std::launch::async, setup);
  } catch (const std::system_error& e) {  // no thread to spare: it runs in finish(), after the pause
    spdlog::warn("sandbox {}: network setup waits for the pause: {}", id, e.what());
    result_ = std::async(std::launch::deferred, setup);
  }
}

void NetworkSetup::netns_made(Status outcome) {
  if (netns_given_) return;
  netns_given_ = true;
  netns_.set_value(std::move(outcome));
}

Result<std::vector<std::string>> NetworkSetup::finish() {
  if (!running()) return std::vector<std::string>{};
  netns_made(failed_precondition(kCalledOff));
  return result_.get();
}

void NetworkSetup::abandon(const std::string& sandbox_id) {
  if (!running()) return;
  const bool called_off = !netns_given_;
  auto ips = finish();
  if (!ips.ok() && !called_off)
    spdlog::warn("sandbox {}: network setup failed as well: {}", sandbox_id, ips.status().message());
}

}  // namespace berth
