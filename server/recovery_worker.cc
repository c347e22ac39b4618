// See recovery_worker.h. Order: containers first (a container of a gone pod goes before anything
// of its pod), then the sandboxes a crash left half made, then runtime state no object owns, then
// the networks of gone sandboxes, and last the image store's garbage (now that every holder is
// known again).
#include "recovery_worker.h"

#include <chrono>
#include <spdlog/spdlog.h>

#include "berth/cni_manager.h"
#include "berth/container_manager.h"
#include "berth/image_manager.h"
#include "berth/oci_runtime.h"
#include "berth/sandbox_manager.h"

namespace berth {

std::vector<RuntimeLeftover> find_runtime_leftovers(const std::map<std::string, std::pair<std::string, std::string>>& runtimes,
                                                    SandboxManager& sandboxes, ContainerManager& containers) {
  std::vector<RuntimeLeftover> out;
  std::map<std::string, bool> roots_seen;
  for (const auto& [name, binary_root] : runtimes) {
    const auto& [binary, root] = binary_root;
    if (roots_seen[root]) continue;
    roots_seen[root] = true;
    for (const auto& id : OciRuntime(binary, root, false).ids_in_root()) {
      // Exact ids only: an id prefix must never make a stranger's container look owned.
      auto s = sandboxes.info(id);
      auto c = containers.info(id);
      if ((s && s->id == id) || (c && c->id == id)) continue;
      out.push_back({binary, root, id});
    }
  }
  return out;
}

RecoveryWorker::RecoveryWorker(ContainerManager& containers, SandboxManager& sandboxes, CniManager& cni, ImageManager& images,
                               std::vector<RuntimeLeftover> leftovers, bool systemd_cgroup)
    : containers_(containers), sandboxes_(sandboxes), cni_(cni), images_(images), leftovers_(std::move(leftovers)),
      systemd_cgroup_(systemd_cgroup) {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::exception& e) {
    spdlog::error("recovery: cannot start its thread ({}); doing the work now", e.what());
    run();
  }
}

RecoveryWorker::~RecoveryWorker() {
  if (thread_.joinable()) thread_.join();
}

void RecoveryWorker::run() {
  auto started = std::chrono::steady_clock::now();
  containers_.finish_recovery();
  sandboxes_.finish_recovery();
  for (const auto& l : leftovers_) {
    // delete --force kills what still runs and removes the cgroup the runtime made.
    if (Status s = OciRuntime(l.binary, l.root, systemd_cgroup_).remove(l.id); !s.ok())
      spdlog::warn("recovery: cannot remove leftover runtime container {} (root {}): {}", l.id, l.root, s.message());
    else
      spdlog::info("recovery: removed leftover runtime container {} (root {}) of no known sandbox or container", l.id, l.root);
  }
  cni_.retry_orphans();
  if (Status s = images_.finish_recovery(); !s.ok()) spdlog::warn("recovery: {}", s.message());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("recovery: finished in {:.1f}ms", ms);
}

}  // namespace berth
