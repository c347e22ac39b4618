// See recovery_worker.h. Order: containers first (a container of a gone pod goes before anything
// of its pod), then the sandboxes a crash left half made, then runtime state no object owns, then
// cgroups no object owns, the networks of gone sandboxes, and last the image store's garbage (now that every holder is
// known again).
#include "recovery_worker.h"

#include <chrono>
#include <filesystem>
#include <set>
#include <spdlog/spdlog.h>

#include "berth/cgroup_removal.h"
#include "berth/systemd_units.h"
#include "berth/cgroups_path.h"
#include "berth/cni_manager.h"
#include "berth/container_manager.h"
#include "berth/image_manager.h"
#include "berth/oci_runtime.h"
#include "berth/sandbox_manager.h"

namespace berth {

std::vector<RuntimeLeftover> find_runtime_leftovers(const RuntimeHandlers& runtimes, SandboxManager& sandboxes,
                                                    ContainerManager& containers) {
  std::vector<RuntimeLeftover> out;
  std::map<std::string, bool> roots_seen;
  for (const RuntimeHandler& handler : runtimes.all()) {
    const std::string& binary = handler.binary;
    const std::string& root = handler.root;
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

void adopt_orphaned_networks(CniManager& cni, SandboxManager& sandboxes) {
  std::vector<std::string> live;
  for (const auto& p : sandboxes.list({})) live.push_back(p.id());
  cni.adopt_orphans(live);
}

std::vector<std::string> find_cgroup_leftovers(SandboxManager& sandboxes, ContainerManager& containers, bool systemd) {
  std::set<std::string> parents{""};  // "": berth's default parent
  for (const auto& p : sandboxes.list({}))
    if (auto info = sandboxes.info(p.id()); info && info->id == p.id()) parents.insert(info->cgroup_parent);
  const std::string probe_id(64, '0');
  std::set<std::string> out;
  for (const auto& parent : parents) {
    auto probe = cgroups_path_for(parent, probe_id, systemd);
    if (!probe.ok()) continue;
    std::string dir = cgroup_dir_of(*probe, systemd);
    std::string parent_dir = dir.substr(0, dir.rfind('/'));
    for (const auto& mount : cgroup_hierarchy_mounts()) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(mount + parent_dir, ec)) {
        if (!e.is_directory(ec)) continue;
        std::string name = e.path().filename(), id = name;
        if (systemd) {
          if (name.size() != 6 + 64 + 6 || name.rfind("berth-", 0) != 0 || name.substr(70) != ".scope") continue;
          id = name.substr(6, 64);
        }
        if (id.size() != 64 || id.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
        auto s = sandboxes.info(id);
        auto c = containers.info(id);
        if ((s && s->id == id) || (c && c->id == id)) continue;
        if (auto path = cgroups_path_for(parent, id, systemd); path.ok()) out.insert(*path);
      }
    }
  }
  return {out.begin(), out.end()};
}

RecoveryWorker::RecoveryWorker(ContainerManager& containers, SandboxManager& sandboxes, CniManager& cni,
                               ImageManager& images, std::vector<RuntimeLeftover> leftovers,
                               std::vector<std::string> cgroup_leftovers, bool systemd_cgroup, SystemdUnits* systemd)
    : containers_(containers),
      sandboxes_(sandboxes),
      cni_(cni),
      images_(images),
      leftovers_(std::move(leftovers)),
      cgroup_leftovers_(std::move(cgroup_leftovers)),
      systemd_cgroup_(systemd_cgroup),
      systemd_(systemd) {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::exception& e) {
    spdlog::error("recovery: cannot start its thread ({}); doing the work now", e.what());
    run();
  }
}

RecoveryWorker::~RecoveryWorker() {
  sandboxes_.stop_network_checks();
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
      spdlog::info("recovery: removed leftover runtime container {} (root {}) of no known sandbox or container", l.id,
                   l.root);
  }
  for (const auto& path : cgroup_leftovers_) {
    // Under systemd its scope too, which a runtime's killed container leaves listed as failed.
    if (systemd_)
      if (Status s = systemd_->stop_unit(systemd_cgroup_of(path).scope); !s.ok())
        spdlog::warn("recovery: cannot stop the scope of leftover cgroup {}: {}", path, s.message());
    // What the runtime's delete above did not remove (a runtime state lost with its create).
    if (!cgroup_exists(path, systemd_cgroup_)) continue;
    if (Status s = remove_cgroup(path, systemd_cgroup_); !s.ok())
      spdlog::warn("recovery: cannot remove leftover cgroup {}: {}", path, s.message());
    else
      spdlog::info("recovery: removed leftover cgroup {} (and what ran in it) of no known sandbox or container", path);
  }
  cni_.retry_orphans();
  if (Status s = images_.finish_recovery(); !s.ok()) spdlog::warn("recovery: {}", s.message());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("recovery: finished in {:.1f}ms", ms);
  sandboxes_.check_recovered_networks();
}

}  // namespace berth
