// See nri_bridge.h. Pods and containers are shown to plugins from the managers' records and the
// spec on disk, as kubelet's view is built (PodSandboxStatus, ContainerStatus). The bridge is
// called by the rpc handlers outside the managers' locks; what plugins ask of running containers
// (updates, evictions) goes straight to the container manager, which never calls back here.
#include "nri_bridge.h"

#include <spdlog/spdlog.h>

#include "berth/config.h"
#include "berth/container_manager.h"
#include "berth/sandbox_manager.h"

namespace berth {

namespace {

nri_api::ContainerState nri_state(v1::ContainerState s) {
  switch (s) {
    case v1::CONTAINER_CREATED: return nri_api::NRI_CONTAINER_CREATED;
    case v1::CONTAINER_RUNNING: return nri_api::NRI_CONTAINER_RUNNING;
    case v1::CONTAINER_EXITED: return nri_api::NRI_CONTAINER_STOPPED;
    default: return nri_api::NRI_CONTAINER_UNKNOWN;
  }
}

// Failures of events whose operation is done already are only logged, as containerd does.
void log_failed(const Status& s, const char* event, const std::string& id) {
  if (!s.ok()) spdlog::warn("nri: {} of {}: {}", event, id, s.message());
}

}  // namespace

Status NriBridge::start(const Config& config, std::string runtime_version, CdiRegistry* cdi, SandboxManager& sandboxes,
                        ContainerManager& containers) {
  cdi_ = cdi;
  sandboxes_ = &sandboxes;
  containers_ = &containers;
  if (!config.nri.enable) return ok_status();
  nri::NriOptions o;
  o.socket_path = config.nri.socket_path;
  o.plugin_dir = config.nri.plugin_path;
  o.plugin_config_dir = config.nri.plugin_config_path;
  o.registration_timeout = std::chrono::milliseconds(config.nri.plugin_registration_timeout_ms);
  o.request_timeout = std::chrono::milliseconds(config.nri.plugin_request_timeout_ms);
  o.runtime_version = std::move(runtime_version);
  o.required_plugins = config.nri.required_plugins;
  o.snapshot = [this](auto& pods, auto& ctrs) { snapshot(pods, ctrs); };
  o.update = [this](const auto& updates) { return apply_updates(updates); };
  o.evict = [this](const auto& e, const std::string& plugin) { evict(e, plugin); };
  auto started = nri::NriPlugins::start(std::move(o));
  if (!started.ok()) return started.status();
  plugins_ = std::move(*started);
  spdlog::info("nri: on ({} plugin(s) started from {}; socket {})", plugins_->plugins().size(), config.nri.plugin_path,
               config.nri.socket_path.empty() ? "none" : config.nri.socket_path);
  return ok_status();
}

std::vector<nri::PluginInfo> NriBridge::plugins() const {
  return plugins_ ? plugins_->plugins() : std::vector<nri::PluginInfo>{};
}

nri_api::PodSandbox NriBridge::pod_view(const std::string& pod_id) {
  nri_api::PodSandbox p;
  p.set_id(pod_id);
  auto info = sandboxes_->info(pod_id);
  if (!info) return p;
  p.set_id(info->id);
  p.set_name(info->name);
  p.set_uid(info->uid);
  p.set_namespace_(info->namespace_);
  p.set_runtime_handler(info->runtime_handler);
  p.set_pid(static_cast<uint32_t>(std::max(info->pid, 0)));
  auto* linux = p.mutable_linux();
  linux->set_cgroup_parent(info->cgroup_parent);
  linux->set_cgroups_path(info->cgroups_path);
  if (!info->netns_path.empty()) {
    auto* ns = linux->add_namespaces();
    ns->set_type("network");
    ns->set_path(info->netns_path);
  }
  v1::PodSandboxStatusResponse status;
  if (sandboxes_->status(pod_id, false, &status).ok()) {
    const auto& s = status.status();
    p.mutable_labels()->insert(s.labels().begin(), s.labels().end());
    p.mutable_annotations()->insert(s.annotations().begin(), s.annotations().end());
    if (!s.network().ip().empty()) p.add_ips(s.network().ip());
    for (const auto& ip : s.network().additional_ips()) p.add_ips(ip.ip());
  }
  return p;
}

nri_api::Container NriBridge::container_view(const std::string& id) {
  nri_api::Container c;
  c.set_id(id);
  auto info = containers_->info(id);
  if (!info) return c;
  c.set_id(info->id);
  c.set_pod_sandbox_id(info->sandbox_id);
  c.set_name(info->metadata.name());
  c.set_state(nri_state(info->state));
  c.set_pid(static_cast<uint32_t>(std::max(info->pid, 0)));
  c.mutable_labels()->insert(info->labels.begin(), info->labels.end());
  c.mutable_annotations()->insert(info->annotations.begin(), info->annotations.end());
  c.set_created_at(info->created_at);
  if (auto spec = oci::read_spec_file(info->bundle + "/config.json"); spec.ok()) fill_nri_container(*spec, c);
  v1::ContainerStatusResponse status;
  if (containers_->status(id, false, &status).ok()) {
    const auto& s = status.status();
    c.set_started_at(s.started_at());
    c.set_finished_at(s.finished_at());
    c.set_exit_code(s.exit_code());
    c.set_status_reason(s.reason());
    c.set_status_message(s.message());
  }
  return c;
}

void NriBridge::snapshot(std::vector<nri_api::PodSandbox>& pods, std::vector<nri_api::Container>& containers) {
  for (const auto& p : sandboxes_->list({})) pods.push_back(pod_view(p.id()));
  for (const auto& c : containers_->list({})) containers.push_back(container_view(c.id()));
}

std::vector<nri_api::ContainerUpdate> NriBridge::apply_updates(const std::vector<nri_api::ContainerUpdate>& updates) {
  std::vector<nri_api::ContainerUpdate> failed;
  for (const auto& u : updates) {
    Status s = containers_->update_resources(u.container_id(), cri_resources(u.linux().resources()));
    if (s.ok()) continue;
    spdlog::warn("nri: update of container {}: {}{}", u.container_id(), s.message(),
                 u.ignore_failure() ? " (the plugin let it fail)" : "");
    if (!u.ignore_failure()) failed.push_back(u);
  }
  return failed;
}

void NriBridge::evict(const nri_api::ContainerEviction& e, const std::string& plugin) {
  spdlog::warn("nri: plugin {} evicts container {}: {}", plugin, e.container_id(), e.reason());
  log_failed(containers_->stop(e.container_id(), 0), "eviction", e.container_id());
}

Status NriBridge::adjust_spec(const SandboxInfo& pod, const v1::ContainerConfig& config, const std::string& id,
                              oci::Spec& spec) {
  if (!plugins_ || (!plugins_->wants(nri_api::NRI_CREATE_CONTAINER) && !plugins_->requires_plugins()))
    return ok_status();
  nri_api::Container c;
  c.set_id(id);
  c.set_pod_sandbox_id(pod.id);
  c.set_name(config.metadata().name());
  c.set_state(nri_api::NRI_CONTAINER_UNKNOWN);
  c.mutable_labels()->insert(config.labels().begin(), config.labels().end());
  c.mutable_annotations()->insert(config.annotations().begin(), config.annotations().end());
  fill_nri_container(spec, c);
  auto adjusted = plugins_->create_container(pod_view(pod.id), c);
  if (!adjusted.ok()) return adjusted.status();
  if (Status s = apply_nri_adjustment(adjusted->adjust, cdi_, spec); !s.ok())
    return Status(
        s.code(), "nri: an adjustment by plugins " + [&] {
          std::string who;
          for (const auto& [field, plugin] : adjusted->owners)
            if (who.find(plugin) == std::string::npos) who += (who.empty() ? "" : ", ") + plugin;
          return who;
        }() + ": " + s.message());
  for (const auto& f : apply_updates(adjusted->updates))
    spdlog::warn("nri: an update of container {} asked while creating {} failed", f.container_id(), id);
  return ok_status();
}

Status NriBridge::pod_running(const std::string& pod_id) {
  return wants(nri_api::NRI_RUN_POD_SANDBOX) ? plugins_->run_pod_sandbox(pod_view(pod_id)) : ok_status();
}

void NriBridge::pod_stopped(const std::string& pod_id) {
  if (wants(nri_api::NRI_STOP_POD_SANDBOX))
    log_failed(plugins_->stop_pod_sandbox(pod_view(pod_id)), "StopPodSandbox", pod_id);
}

void NriBridge::pod_removed(const std::string& pod_id, const nri_api::PodSandbox& before) {
  if (wants(nri_api::NRI_REMOVE_POD_SANDBOX))
    log_failed(plugins_->remove_pod_sandbox(before), "RemovePodSandbox", pod_id);
}

Status NriBridge::pod_updating(const std::string& pod_id, const v1::LinuxContainerResources& overhead,
                               const v1::LinuxContainerResources& resources) {
  if (!wants(nri_api::NRI_UPDATE_POD_SANDBOX)) return ok_status();
  return plugins_->update_pod_sandbox(pod_view(pod_id), nri_resources(overhead), nri_resources(resources));
}

void NriBridge::pod_updated(const std::string& pod_id) {
  if (wants(nri_api::NRI_POST_UPDATE_POD_SANDBOX))
    log_failed(plugins_->post_update_pod_sandbox(pod_view(pod_id)), "PostUpdatePodSandbox", pod_id);
}

void NriBridge::container_created(const std::string& id) {
  if (!wants(nri_api::NRI_POST_CREATE_CONTAINER)) return;
  auto c = container_view(id);
  log_failed(plugins_->post_create_container(pod_view(c.pod_sandbox_id()), c), "PostCreateContainer", id);
}

Status NriBridge::container_starting(const std::string& id) {
  if (!wants(nri_api::NRI_START_CONTAINER)) return ok_status();
  auto c = container_view(id);
  return plugins_->start_container(pod_view(c.pod_sandbox_id()), c);
}

void NriBridge::container_started(const std::string& id) {
  if (!wants(nri_api::NRI_POST_START_CONTAINER)) return;
  auto c = container_view(id);
  log_failed(plugins_->post_start_container(pod_view(c.pod_sandbox_id()), c), "PostStartContainer", id);
}

Result<v1::LinuxContainerResources> NriBridge::container_updating(const std::string& id,
                                                                  const v1::LinuxContainerResources& r) {
  if (!wants(nri_api::NRI_UPDATE_CONTAINER)) return r;
  auto c = container_view(id);
  auto resources = nri_resources(r);
  auto others = plugins_->update_container(pod_view(c.pod_sandbox_id()), c, resources);
  if (!others.ok()) return others.status();
  for (const auto& f : apply_updates(*others))
    spdlog::warn("nri: an update of container {} asked while updating {} failed", f.container_id(), id);
  auto out = cri_resources(resources);
  out.set_oom_score_adj(r.oom_score_adj());  // not NRI's to change here
  return out;
}

void NriBridge::container_updated(const std::string& id) {
  if (!wants(nri_api::NRI_POST_UPDATE_CONTAINER)) return;
  auto c = container_view(id);
  log_failed(plugins_->post_update_container(pod_view(c.pod_sandbox_id()), c), "PostUpdateContainer", id);
}

void NriBridge::container_stopped(const std::string& id) {
  if (!wants(nri_api::NRI_STOP_CONTAINER)) return;
  auto c = container_view(id);
  auto others = plugins_->stop_container(pod_view(c.pod_sandbox_id()), c);
  if (!others.ok()) return log_failed(others.status(), "StopContainer", id);
  for (const auto& f : apply_updates(*others))
    spdlog::warn("nri: an update of container {} asked at the stop of {} failed", f.container_id(), id);
}

void NriBridge::container_removed(const nri_api::PodSandbox& pod, const nri_api::Container& before) {
  if (wants(nri_api::NRI_REMOVE_CONTAINER))
    log_failed(plugins_->remove_container(pod, before), "RemoveContainer", before.id());
}

}  // namespace berth
