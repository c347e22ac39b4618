// What the sandbox calls serve from memory: PodSandboxStatus (with the verbose info and the CNI
// CHECK of the pod's recovery), ListPodSandbox, the SandboxInfo other modules read, and the ready count.
#include <poll.h>

#include <nlohmann/json.hpp>

#include "berth/lexical_path.h"
#include "berth/mutex.h"
#include "berth/oci_spec.h"
#include "berth/sandbox_manager.h"
#include "sandbox_state.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

void fill_metadata(const SandboxCheckpoint& cp, v1::PodSandboxMetadata* m) {
  m->set_name(cp.name);
  m->set_namespace_(cp.namespace_);
  m->set_uid(cp.uid);
  m->set_attempt(cp.attempt);
}

}  // namespace

Status SandboxManager::status(const std::string& id_or_prefix, bool verbose, v1::PodSandboxStatusResponse* out) {
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err;
  const SandboxCheckpoint& cp = s->cp;
  bool ready = false;
  int pid = 0;
  std::vector<std::string> ips;
  {
    MutexLock lock(s->mu);
    ready = s->ready_locked();
    pid = ready ? s->pid : 0;
    ips = s->ips;
  }
  auto* st = out->mutable_status();
  st->set_id(cp.id);
  fill_metadata(cp, st->mutable_metadata());
  st->set_state(ready ? v1::SANDBOX_READY : v1::SANDBOX_NOTREADY);
  st->set_created_at(cp.created_at);
  auto* net = st->mutable_network();
  if (!ips.empty()) {
    net->set_ip(ips[0]);
    for (size_t i = 1; i < ips.size(); ++i) net->add_additional_ips()->set_ip(ips[i]);
  }
  auto* opts = st->mutable_linux()->mutable_namespaces()->mutable_options();
  opts->set_network(static_cast<v1::NamespaceMode>(cp.network_mode));
  opts->set_pid(static_cast<v1::NamespaceMode>(cp.pid_mode));
  opts->set_ipc(static_cast<v1::NamespaceMode>(cp.ipc_mode));
  if (!cp.userns_path.empty()) {
    auto* u = opts->mutable_userns_options();
    u->set_mode(v1::POD);
    for (auto [ids, out] : {std::pair{&cp.uid_mappings, u->mutable_uids()}, {&cp.gid_mappings, u->mutable_gids()}})
      for (const IdMapping& m : *ids) {
        auto* e = out->Add();
        e->set_container_id(m.container_id);
        e->set_host_id(m.host_id);
        e->set_length(m.length);
      }
  }
  st->mutable_labels()->insert(cp.labels.begin(), cp.labels.end());
  st->mutable_annotations()->insert(cp.annotations.begin(), cp.annotations.end());
  st->set_runtime_handler(cp.runtime_handler);
  if (verbose) {
    nlohmann::json info = {{"pid", pid},
                           {"netns_path", cp.netns_path},
                           {"checkpoint", checkpoint_path(impl_->checkpoints_dir, cp.id)},
                           {"bundle", s->bundle},
                           {"cgroups_path", s->cgroups_path}};
    if (!cp.userns_path.empty())
      info["userns"] = {{"path", cp.userns_path},
                        {"uid_map", id_map_text(cp.uid_mappings)},
                        {"gid_map", id_map_text(cp.gid_mappings)}};
    std::string resources, network_check;
    {
      MutexLock lock(s->mu);
      resources = s->cp.resources;
      network_check = s->network_check;
    }
    // The CHECK of the pod's recovery, never one per call (a CHECK execs the plugin chain).
    if (!network_check.empty()) info["network_check"] = network_check;
    if (auto r = nlohmann::json::parse(resources, nullptr, false); r.is_object()) info["resources"] = r;
    if (auto spec = oci::read_spec_file(s->bundle + "/config.json"); spec.ok())
      info["runtimeSpec"] = oci::to_json(*spec);
    // The network check's message may carry a plugin's raw output: dump() throws on bytes that
    // are not UTF-8, so they are replaced instead.
    (*out->mutable_info())["info"] = info.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return ok_status();
}

namespace {

// ready_locked() of each, with one poll() over every running pause's pidfd instead of a poll per
// sandbox (kubelet lists every second). A pidfd the sandbox's stop closed meanwhile is seen by
// comparing it afterwards: while the sandbox holds it, its number cannot name another file.
std::vector<bool> readiness(const std::vector<std::shared_ptr<Sandbox>>& all) {
  std::vector<bool> ready(all.size(), false);
  std::vector<pollfd> fds;
  std::vector<size_t> polled;  // index in `all` of each fds entry
  for (size_t i = 0; i < all.size(); ++i) {
    const Sandbox& s = *all[i];
    MutexLock lock(s.mu);
    if (s.pidfd && s.pause_expected_locked()) {
      fds.push_back({s.pidfd.get(), POLLIN, 0});
      polled.push_back(i);
    } else {
      ready[i] = s.ready_locked();
    }
  }
  if (fds.empty()) return ready;
  if (::poll(fds.data(), fds.size(), 0) < 0) {  // (EINTR, ENOMEM): one at a time
    for (size_t i : polled) ready[i] = all[i]->ready();
    return ready;
  }
  for (size_t k = 0; k < fds.size(); ++k) {
    const Sandbox& s = *all[polled[k]];
    MutexLock lock(s.mu);
    ready[polled[k]] = s.pidfd.get() == fds[k].fd ? s.pause_expected_locked() && fds[k].revents == 0 : s.ready_locked();
  }
  return ready;
}

}  // namespace

std::vector<std::pair<std::shared_ptr<Sandbox>, bool>> SandboxManager::Impl::select(const v1::PodSandboxFilter& f) {
  std::vector<std::shared_ptr<Sandbox>> all;
  {
    MutexLock lock(mu);
    all.reserve(sandboxes.size());
    for (const auto& [id, s] : sandboxes)
      if (f.id().empty() || id.rfind(f.id(), 0) == 0) all.push_back(s);
  }
  std::vector<bool> ready = readiness(all);
  std::vector<std::pair<std::shared_ptr<Sandbox>, bool>> out;
  out.reserve(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    auto& s = all[i];
    if (f.has_state() && f.state().state() != (ready[i] ? v1::SANDBOX_READY : v1::SANDBOX_NOTREADY)) continue;
    bool labels_match = true;
    for (const auto& [k, v] : f.label_selector()) {
      auto it = s->cp.labels.find(k);
      if (it == s->cp.labels.end() || it->second != v) labels_match = false;
    }
    if (labels_match) out.emplace_back(std::move(s), ready[i]);
  }
  return out;
}

std::vector<v1::PodSandbox> SandboxManager::list(const v1::PodSandboxFilter& f) {
  std::vector<v1::PodSandbox> out;
  auto selected = impl_->select(f);
  out.reserve(selected.size());
  for (const auto& [s, ready] : selected) {
    const SandboxCheckpoint& cp = s->cp;
    v1::PodSandbox& p = out.emplace_back();
    p.set_id(cp.id);
    fill_metadata(cp, p.mutable_metadata());
    p.set_state(ready ? v1::SANDBOX_READY : v1::SANDBOX_NOTREADY);
    p.set_created_at(cp.created_at);
    p.mutable_labels()->insert(cp.labels.begin(), cp.labels.end());
    p.mutable_annotations()->insert(cp.annotations.begin(), cp.annotations.end());
    p.set_runtime_handler(cp.runtime_handler);
  }
  return out;
}

std::vector<PodStatsSource> SandboxManager::stats_sources(const v1::PodSandboxFilter& f) {
  std::vector<PodStatsSource> out;
  auto selected = impl_->select(f);
  out.reserve(selected.size());
  for (const auto& [s, ready] : selected) {
    const SandboxCheckpoint& cp = s->cp;
    PodStatsSource& p = out.emplace_back();
    p.attributes.set_id(cp.id);
    fill_metadata(cp, p.attributes.mutable_metadata());
    p.attributes.mutable_labels()->insert(cp.labels.begin(), cp.labels.end());
    p.attributes.mutable_annotations()->insert(cp.annotations.begin(), cp.annotations.end());
    p.ready = ready;
    p.host_network = cp.host_network;
    p.cgroups_path = s->cgroups_path;
    p.cgroup_parent = cp.cgroup_parent;
    MutexLock lock(s->mu);
    p.pid = s->pid;
  }
  return out;
}

std::optional<SandboxInfo> SandboxManager::info(const std::string& id_or_prefix) {
  auto s = impl_->find(id_or_prefix, nullptr);
  if (!s) return std::nullopt;
  const SandboxCheckpoint& cp = s->cp;
  SandboxInfo info{cp.id,
                   false,
                   0,
                   cp.netns_path,
                   s->cgroups_path,
                   cp.cgroup_parent,
                   s->bundle,
                   s->shm_path,
                   cp.runtime_handler,
                   lexically_normal_dir(cp.log_directory)};  // checkpoints of older berthds kept it as asked
  {
    MutexLock lock(s->mu);
    info.ready = s->ready_locked();
    info.pid = s->pid;
    info.closing = s->closing;
  }
  info.name = cp.name;
  info.namespace_ = cp.namespace_;
  info.uid = cp.uid;
  info.hostname = cp.hostname;
  info.host_network = cp.host_network;
  info.host_ipc = cp.ipc_mode == v1::NODE;
  info.host_pid = cp.pid_mode == v1::NODE;
  info.privileged = cp.privileged;
  info.userns = {!cp.userns_path.empty(), cp.uid_mappings, cp.gid_mappings};
  info.userns_path = cp.userns_path;
  return info;
}

Result<SandboxInfo> SandboxManager::lookup(const std::string& id_or_prefix) {
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err;
  auto found = info(s->cp.id);
  if (!found) return not_found("pod sandbox " + id_or_prefix + " not found");
  return *found;
}

size_t SandboxManager::ready_count() {
  std::vector<std::shared_ptr<Sandbox>> all;
  {
    MutexLock lock(impl_->mu);
    for (const auto& [id, s] : impl_->sandboxes) all.push_back(s);
  }
  size_t n = 0;
  for (const auto& s : all) n += s->ready();
  return n;
}

}  // namespace berth
