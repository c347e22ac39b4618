// RecoveryWorker: the part of berthd's recovery that runs runtimes and CNI plugins, done on a
// thread of its own once berthd serves, so a restart answers kubelet within milliseconds however
// much a crash left to clean. What it is to clean is decided before serving (find_leftovers), so
// nothing made after the start is ever taken for a leftover.
#pragma once

#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "berth/runtime_handlers.h"

namespace berth {

class CniManager;
class ContainerManager;
class ImageManager;
class SandboxManager;
class SystemdUnits;

// A container in a runtime's --root that no sandbox or container of berth's owns.
struct RuntimeLeftover {
  std::string binary, root, id;
};

// Reads every runtime root (no runtime is run) for ids neither manager knows.
std::vector<RuntimeLeftover> find_runtime_leftovers(const RuntimeHandlers& runtimes, SandboxManager& sandboxes,
                                                    ContainerManager& containers);

// The cgroupsPath of every cgroup below a cgroup parent that berth's sandboxes use (their
// checkpoints' parents and berth's default) named as berth names a sandbox or container (the
// 64-hex id, or berth-<id>.scope under systemd) but owned by no sandbox or container it knows.
// berth owns the cgroups of the pods it places in a parent, as kubelet gives each pod its own.
std::vector<std::string> find_cgroup_leftovers(SandboxManager& sandboxes, ContainerManager& containers,
                                               bool systemd_cgroup);

// Networks whose sandbox is gone (a rollback DEL that failed before a restart) are released by the
// recovery worker; which ones is decided at start, before any new sandbox can exist: the CNI
// manager takes every cached network of no sandbox the manager recovered as an orphan.
void adopt_orphaned_networks(CniManager& cni, SandboxManager& sandboxes);

class RecoveryWorker {
 public:
  RecoveryWorker(ContainerManager& containers, SandboxManager& sandboxes, CniManager& cni, ImageManager& images,
                 std::vector<RuntimeLeftover> leftovers, std::vector<std::string> cgroup_leftovers, bool systemd_cgroup,
                 SystemdUnits* systemd);
  ~RecoveryWorker();  // waits for the work to end
  RecoveryWorker(const RecoveryWorker&) = delete;
  RecoveryWorker& operator=(const RecoveryWorker&) = delete;

 private:
  void run();
  ContainerManager& containers_;
  SandboxManager& sandboxes_;
  CniManager& cni_;
  ImageManager& images_;
  std::vector<RuntimeLeftover> leftovers_;
  std::vector<std::string> cgroup_leftovers_;
  bool systemd_cgroup_;
  SystemdUnits* systemd_;  // with the systemd driver: leftover scopes are stopped too
  std::thread thread_;
};

}  // namespace berth
