// Recovery at berthd start: every checkpoint becomes a sandbox again, checked against the host
// rather than trusted: a "ready" sandbox is READY only when its pause (from the runtime's pid file)
// still runs in the sandbox's own cgroup, which a recycled pid never is (a pidfd then holds it,
// for the tear-down's kill); a "creating" one, cut short by a crash, waits NOTREADY for
// finish_recovery() to undo it. No runtime is run here, so berthd serves again within
// milliseconds whatever the number of pods. Netns pins and bundles no checkpoint owns (a
// checkpoint quarantined, or state from before checkpoints came first) are released, with the
// cgroup their bundle's spec names, each with one log line.
#include <filesystem>
#include <set>
#include <spdlog/spdlog.h>

#include "berth/cgroup_removal.h"
#include "berth/cgroups_path.h"
#include "berth/file_text.h"
#include "berth/file_tree.h"
#include "berth/oci_spec.h"
#include "berth/process_identity.h"
#include "netns.h"
#include "pod_mounts.h"
#include "sandbox_state.h"

namespace berth {

namespace fs = std::filesystem;

std::shared_ptr<Sandbox> SandboxManager::Impl::recovered_sandbox(const SandboxCheckpoint& cp) {
  auto s = std::make_shared<Sandbox>();
  s->cp = cp;
  s->bundle = bundles_dir + "/" + cp.id;
  s->shm_path = cp.ipc_mode == runtime::v1::NODE ? "/dev/shm" : s->bundle + "/shm";
  // Derived again, as at the start: stats and verbose status read the pod's cgroup by it.
  if (auto cg = cgroups_path_for(cp.cgroup_parent, cp.id, opt.runtimes.systemd_cgroup()); cg.ok())
    s->cgroups_path = *cg;
  // Not shared yet: its locks are taken for what they guard.
  MutexLock op(s->op);
  MutexLock lock(s->mu);
  switch (cp.phase) {
    case SandboxPhase::stopped:
      s->stopped = true;
      s->runtime_may_exist = false;
      break;
    case SandboxPhase::creating:  // NOTREADY until finish_recovery() undoes it (READY needs phase ready)
    case SandboxPhase::ready: {
      // The pause (for a run cut short after the runtime's create, the init that was to become
      // it): held by a pidfd, so the tear-down kills it and sees its end without the runtime.
      pid_t pid = read_pid_file(s->bundle + "/pid");
      if (pid > 0 && process_in_cgroup_leaf(pid, cp.id)) {
        UniqueFd fd = open_pidfd(pid);
        // Looked at again through the pidfd: the pid may have been recycled in between.
        if (fd && process_in_cgroup_leaf(pid, cp.id)) {
          s->pid = pid;
          s->pidfd = std::move(fd);
        }
      }
      break;
    }
  }
  if (!cp.host_network && opt.network) s->ips = opt.network->recorded_ips(cp.id);
  return s;
}

void SandboxManager::Impl::recover() {
  auto loaded = load_checkpoints(checkpoints_dir, quarantine_dir);
  for (const auto& q : loaded.quarantined) spdlog::error("sandbox checkpoint quarantined: {}", q);
  for (const auto& t : loaded.temps_removed) spdlog::info("sandboxes: removed {}, a checkpoint write cut short", t);
  size_t ready = 0, pending = 0;
  for (const auto& cp : loaded.valid) {
    auto s = recovered_sandbox(cp);
    if (Status st = names.reserve(sandbox_name_key(cp), cp.id, "sandbox"); !st.ok())
      spdlog::warn("sandbox {}: {}", cp.id, st.message());
    if (!cp.image_id.empty() && opt.images) opt.images->hold(cp.image_id);
    {
      MutexLock lock(s->mu);
      ready += s->ready_locked();
    }
    pending += cp.phase == SandboxPhase::creating;
    MutexLock lock(mu);
    sandboxes[cp.id] = std::move(s);
  }
  if (!loaded.valid.empty())
    spdlog::info("sandboxes: recovered {} from checkpoints: {} ready, {} cut short to undo", loaded.valid.size(), ready,
                 pending);
  remove_leftovers();
}

void SandboxManager::Impl::remove_leftovers() {
  std::set<std::string> known;
  {
    MutexLock lock(mu);
    for (const auto& [id, s] : sandboxes) known.insert(id);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(netns_dir, ec)) {
    std::string id = e.path().filename();
    if (known.count(id)) continue;
    if (Status s = remove_pinned_netns(e.path()); !s.ok())
      spdlog::warn("sandboxes: cannot remove leftover netns pin {}: {}", e.path().string(), s.message());
    else
      spdlog::info("sandboxes: removed leftover netns pin {} of no known sandbox", e.path().string());
  }
  for (const auto& e : fs::directory_iterator(bundles_dir, ec)) {
    std::string id = e.path().filename();
    if (known.count(id)) continue;
    // The spec names the cgroup the runtime made: it goes too (its runtime state goes with the
    // runtime-root sweep, which knows the containers' ids as well).
    // No spec (a bundle cut short before it was written) or one that does not read names no
    // cgroup: the bundle goes without it.
    std::string cgroups_path;
    if (fs::exists(e.path() / "config.json")) {
      auto spec = oci::read_spec_file(e.path() / "config.json");
      if (!spec.ok())
        spdlog::warn("sandboxes: leftover bundle {}: {}", e.path().string(), spec.status().message());
      else if (spec->linux)
        cgroups_path = spec->linux->cgroups_path;
    }
    Status s = unmount_path(e.path() / "rootfs");
    if (s.ok()) s = unmount_path(e.path() / "shm");
    if (s.ok() && !cgroups_path.empty()) s = remove_cgroup(cgroups_path, opt.runtimes.systemd_cgroup());
    if (s.ok()) s = remove_tree(e.path());
    if (!s.ok())
      spdlog::warn("sandboxes: cannot remove leftover bundle {}: {}", e.path().string(), s.message());
    else
      spdlog::info("sandboxes: removed leftover bundle {} of no known sandbox", e.path().string());
  }
}

void SandboxManager::Impl::check_recovered_networks() {
  if (!opt.network) return;
  std::vector<std::shared_ptr<Sandbox>> all;
  {
    MutexLock lock(mu);
    for (const auto& [id, s] : sandboxes)
      if (!s->cp.host_network) all.push_back(s);
  }
  size_t failed = 0;
  for (const auto& s : all) {
    if (network_checks_stopped) return;
    MutexLock op(s->op);  // not while a stop tears the network down
    {
      MutexLock lock(s->mu);
      if (s->removed || !s->ready_locked()) continue;
    }
    Status check = opt.network->check(s->cp.id, s->cp.netns_path);
    if (!check.ok()) {
      ++failed;
      spdlog::warn("sandbox {}: CNI CHECK after recovery: {}", s->cp.id, check.message());
    }
    MutexLock lock(s->mu);
    s->network_check = check.ok() ? std::string("ok") : check.message();
  }
  if (!all.empty()) spdlog::info("sandboxes: CNI CHECK of {} recovered pods: {} failed", all.size(), failed);
}

}  // namespace berth
