// PullHelperPool: berth-pull helpers kept between pulls, so that a pull does not pay for a process
// start, its libraries' loading, its confinement and a new connection (and TLS handshake) to the
// registry before its first byte. A helper serves one pull at a time; when the pull is over it
// waits here for the next pull with the same registry settings from the same registry, and exits
// after idling for `idle`. A helper is only ever given pulls from one registry: a fetcher that a
// hostile registry took over sees nothing but what that registry would be sent anyway.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "berth/image_reference.h"
#include "berth/registry_settings.h"
#include "berth/status.h"
#include "pull_steps.h"

namespace berth {

class PullHelperPool {
 public:
  struct Options {
    std::string binary;  // berth-pull
    std::string store;   // the blob store's directory (in every helper's hello)
    // How long a helper waits for its next pull; zero: each pull's helpers exit with it.
    std::chrono::milliseconds idle{std::chrono::seconds(60)};
    // Idle helpers kept at most, per registry and in all (the ones idle longest go first). A
    // helper and its fetcher idle hold about 8 MiB (proportional set size, after a 200 MiB pull):
    // one per registry is what makes the next pull from it fast; a pull's other layer threads
    // start theirs while its first layer downloads.
    size_t max_idle_per_registry = 1;
    size_t max_idle = 2;
  };
  explicit PullHelperPool(Options options);
  // Idle helpers are ended; steps still out keep their helper and end it when they go.
  ~PullHelperPool();
  PullHelperPool(const PullHelperPool&) = delete;
  PullHelperPool& operator=(const PullHelperPool&) = delete;

  // The steps of a pull of `ref` (or of one of its layer threads) in a helper: an idle one started
  // with the same settings for the same registry, else a new one. Destroying them ends the pull
  // in the helper (its credentials dropped) and gives the helper back, unless a step killed it.
  Result<std::unique_ptr<PullSteps>> acquire(std::shared_ptr<const RegistryOptions> registry, const ImageReference& ref,
                                             const RegistryCredentials& creds, std::function<void(size_t)> on_bytes,
                                             PullStopCheck stop);

  // Ends every idle helper now; returns how many.
  size_t end_idle();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace berth
