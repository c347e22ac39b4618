// NriPlugins' events: each goes to the plugins subscribed to it, one after another in index
// order, under one lock (a new plugin's synchronisation takes it too, so it misses nothing and
// sees nothing twice). A fatal failure (no answer in time, a broken or closed connection, an
// answer that does not parse) disconnects that plugin and the event goes on without it; an
// error the plugin answers with fails the event, naming the plugin.
#include <spdlog/spdlog.h>

#include "berth/ttrpc_wire.h"
#include "nri_plugins_impl.h"

namespace berth::nri {

namespace {

// The pod and container events a plugin of an older API gets through StateChange instead.
bool has_state_change_fallback(api::Event e) {
  switch (e) {
    case api::NRI_RUN_POD_SANDBOX:
    case api::NRI_STOP_POD_SANDBOX:
    case api::NRI_REMOVE_POD_SANDBOX:
    case api::NRI_POST_CREATE_CONTAINER:
    case api::NRI_START_CONTAINER:
    case api::NRI_POST_START_CONTAINER:
    case api::NRI_POST_UPDATE_CONTAINER:
    case api::NRI_REMOVE_CONTAINER:
    case api::NRI_POST_UPDATE_POD_SANDBOX: return true;
    default: return false;
  }
}

// Sends one event to one plugin: the answer's bytes; nullopt when the plugin was disconnected
// (the event goes on without it).
Result<std::optional<std::string>> deliver(NriPlugins::Impl& impl, const std::shared_ptr<Plugin>& p, api::Event event,
                                           const std::string& method, const std::string& request,
                                           const api::PodSandbox* pod, const api::Container* container) {
  const bool fallback = has_state_change_fallback(event);
  Result<std::string> answer = Status(Code::unimplemented, "");
  if (!(p->state_change && fallback)) answer = p->conn->call(method, request, impl.opt.request_timeout);
  if (!answer.ok() && answer.status().code() == Code::unimplemented && fallback) {
    if (!p->state_change) spdlog::info("nri: plugin {} has no {}: StateChange from now on", p->id(), method);
    p->state_change = true;
    api::StateChangeEvent change;
    change.set_event(event);
    if (pod) *change.mutable_pod() = *pod;
    if (container) *change.mutable_container() = *container;
    answer = p->conn->call("StateChange", change.SerializeAsString(), impl.opt.request_timeout);
  }
  if (answer.ok()) return std::optional<std::string>(std::move(*answer));
  if (is_fatal(answer.status())) {
    impl.disconnect(p.get(), method + ": " + answer.status().message());
    return std::optional<std::string>();
  }
  return Status(answer.status().code() == Code::unimplemented ? Code::internal : answer.status().code(),
                "nri: plugin " + p->id() + " failed " + method + ": " + answer.status().message());
}

template <typename Response>
Result<std::optional<Response>> parse_answer(NriPlugins::Impl& impl, const std::shared_ptr<Plugin>& p,
                                             const std::string& method, const std::optional<std::string>& bytes) {
  if (!bytes) return std::optional<Response>();
  Response r;
  if (!r.ParseFromString(*bytes)) {
    impl.disconnect(p.get(), method + ": an answer that does not parse");
    return std::optional<Response>();
  }
  return std::optional<Response>(std::move(r));
}

// An event whose answer carries nothing berth uses.
Status notify(NriPlugins::Impl& impl, api::Event event, const std::string& method, const std::string& request,
              const api::PodSandbox* pod, const api::Container* container) {
  MutexLock events(impl.events_mu);
  for (const auto& p : impl.subscribed(event)) {
    auto answer = deliver(impl, p, event, method, request, pod, container);
    if (!answer.ok()) return answer.status();
  }
  return ok_status();
}

template <typename Request>
Request pod_request(const api::PodSandbox& pod) {
  Request r;
  *r.mutable_pod() = pod;
  return r;
}

template <typename Request>
Request container_request(const api::PodSandbox& pod, const api::Container& container) {
  Request r;
  *r.mutable_pod() = pod;
  *r.mutable_container() = container;
  return r;
}

// Updates of other containers that several plugins answered with, merged per container.
class UpdateSet {
 public:
  Status add(const std::string& plugin, const api::ContainerUpdate& u) {
    auto& into = updates_[u.container_id()];
    const bool fresh = into.container_id().empty();
    Status s = merge_resources(plugin, u.container_id(), u.linux().resources(),
                               *into.mutable_linux()->mutable_resources(), owners_);
    if (!s.ok()) {
      if (fresh) updates_.erase(u.container_id());
      return u.ignore_failure() ? ok_status() : s;  // an update that may fail may also lose
    }
    into.set_container_id(u.container_id());
    into.set_ignore_failure(fresh ? u.ignore_failure() : into.ignore_failure() && u.ignore_failure());
    return ok_status();
  }
  std::vector<api::ContainerUpdate> take() {
    std::vector<api::ContainerUpdate> out;
    for (auto& [id, u] : updates_) out.push_back(std::move(u));
    updates_.clear();
    return out;
  }

 private:
  std::map<std::string, api::ContainerUpdate> updates_;
  std::map<std::string, std::string> owners_;
};

}  // namespace

Status NriPlugins::Impl::synchronize(Plugin& p) {
  api::SynchronizeRequest all;
  std::vector<api::PodSandbox> pods;
  std::vector<api::Container> containers;
  if (opt.snapshot) opt.snapshot(pods, containers);
  // As many chunks as it takes for each to fit a ttrpc frame, every one but the last with `more`.
  size_t chunks = 1;
  std::vector<api::SynchronizeRequest> requests;
  for (;;) {
    requests.clear();
    const size_t per_pods = (pods.size() + chunks - 1) / chunks,
                 per_containers = (containers.size() + chunks - 1) / chunks;
    bool fits = true;
    for (size_t c = 0; c < chunks; ++c) {
      api::SynchronizeRequest r;
      for (size_t i = c * per_pods; i < std::min(pods.size(), (c + 1) * per_pods); ++i) *r.add_pods() = pods[i];
      for (size_t i = c * per_containers; i < std::min(containers.size(), (c + 1) * per_containers); ++i)
        *r.add_containers() = containers[i];
      r.set_more(c + 1 < chunks);
      fits = fits && r.ByteSizeLong() + 1024 < ttrpc::kMaxFrameData;
      requests.push_back(std::move(r));
    }
    if (fits) break;
    if (per_pods <= 1 && per_containers <= 1)
      return Status(Code::resource_exhausted, "a pod or container too large to send");
    chunks *= 2;
  }
  api::SynchronizeResponse last;
  for (const auto& r : requests) {
    auto answer = p.conn->call("Synchronize", r.SerializeAsString(), opt.request_timeout);
    if (!answer.ok()) return answer.status();
    api::SynchronizeResponse resp;
    if (!resp.ParseFromString(*answer)) return invalid_argument("the answer does not parse");
    if (r.more() && (!resp.more() || resp.update_size() > 0))
      return invalid_argument("the plugin does not handle a synchronisation in parts");
    last = std::move(resp);
  }
  if (last.update_size() > 0 && opt.update) {
    std::vector<api::ContainerUpdate> updates(last.update().begin(), last.update().end());
    for (const auto& f : opt.update(updates))
      spdlog::warn("nri: plugin {}'s update of container {} at synchronisation failed", p.id(), f.container_id());
  }
  return ok_status();
}

Status NriPlugins::run_pod_sandbox(const api::PodSandbox& pod) {
  return notify(*impl_, api::NRI_RUN_POD_SANDBOX, "RunPodSandbox",
                pod_request<api::RunPodSandboxRequest>(pod).SerializeAsString(), &pod, nullptr);
}

Status NriPlugins::stop_pod_sandbox(const api::PodSandbox& pod) {
  return notify(*impl_, api::NRI_STOP_POD_SANDBOX, "StopPodSandbox",
                pod_request<api::StopPodSandboxRequest>(pod).SerializeAsString(), &pod, nullptr);
}

Status NriPlugins::remove_pod_sandbox(const api::PodSandbox& pod) {
  return notify(*impl_, api::NRI_REMOVE_POD_SANDBOX, "RemovePodSandbox",
                pod_request<api::RemovePodSandboxRequest>(pod).SerializeAsString(), &pod, nullptr);
}

Status NriPlugins::update_pod_sandbox(const api::PodSandbox& pod, const api::LinuxResources& overhead,
                                      const api::LinuxResources& resources) {
  auto r = pod_request<api::UpdatePodSandboxRequest>(pod);
  *r.mutable_overhead_linux_resources() = overhead;
  *r.mutable_linux_resources() = resources;
  return notify(*impl_, api::NRI_UPDATE_POD_SANDBOX, "UpdatePodSandbox", r.SerializeAsString(), &pod, nullptr);
}

Status NriPlugins::post_update_pod_sandbox(const api::PodSandbox& pod) {
  return notify(*impl_, api::NRI_POST_UPDATE_POD_SANDBOX, "PostUpdatePodSandbox",
                pod_request<api::PostUpdatePodSandboxRequest>(pod).SerializeAsString(), &pod, nullptr);
}

Result<CreateAdjustment> NriPlugins::create_container(const api::PodSandbox& pod, const api::Container& container) {
  MutexLock events(impl_->events_mu);
  AdjustmentMerger merger(container);
  UpdateSet updates;
  for (const auto& p : impl_->subscribed(api::NRI_CREATE_CONTAINER)) {
    // Each plugin sees the container as the ones before it adjusted it.
    auto r = container_request<api::CreateContainerRequest>(pod, merger.container());
    auto bytes = deliver(*impl_, p, api::NRI_CREATE_CONTAINER, "CreateContainer", r.SerializeAsString(), &pod,
                         &merger.container());
    if (!bytes.ok()) return bytes.status();
    auto answer = parse_answer<api::CreateContainerResponse>(*impl_, p, "CreateContainer", *bytes);
    if (!answer.ok()) return answer.status();
    if (!*answer) continue;
    if (Status s = merger.add(p->id(), (*answer)->adjust()); !s.ok()) return s;
    for (const auto& u : (*answer)->update()) {
      if (u.container_id() == container.id())
        return failed_precondition("nri: plugin " + p->id() + " asked an update of container " + container.id() +
                                   " during its creation");
      if (Status s = updates.add(p->id(), u); !s.ok()) return s;
    }
    for (const auto& e : (*answer)->evict())
      if (impl_->opt.evict) impl_->opt.evict(e, p->id());
  }
  // After the plugins' turn: a required plugin that timed out on this very event is missing too.
  for (const auto& name : impl_->opt.required_plugins) {
    MutexLock lock(impl_->mu);
    if (std::none_of(impl_->plugins.begin(), impl_->plugins.end(), [&](const auto& p) { return p->name == name; }))
      return failed_precondition("nri: required plugin \"" + name + "\" is not running ([nri] required_plugins)");
  }
  CreateAdjustment out{merger.merged(), updates.take(), merger.owners()};
  if (Status s = impl_->validate(pod, container, out); !s.ok()) return s;
  return out;
}

Status NriPlugins::Impl::validate(const api::PodSandbox& pod, const api::Container& pristine,
                                  const CreateAdjustment& adjusted) {
  auto validators = subscribed(api::NRI_VALIDATE_CONTAINER_ADJUSTMENT);
  if (validators.empty()) return ok_status();
  api::ValidateContainerAdjustmentRequest r;
  *r.mutable_pod() = pod;
  *r.mutable_container() = pristine;
  *r.mutable_adjust() = adjusted.adjust;
  for (const auto& u : adjusted.updates) *r.add_update() = u;
  *r.mutable_owners() = owning_plugins(pristine.id(), adjusted.owners);
  {
    MutexLock lock(mu);
    for (const auto& p : plugins) {
      auto* i = r.add_plugins();
      i->set_name(p->name);
      i->set_index(p->index);
    }
  }
  const std::string request = r.SerializeAsString();
  // Unlike an event, a validation that does not come fails the create: the validator is the
  // node's policy, and a container it has not seen must not run.
  for (const auto& p : validators) {
    auto answer = p->conn->call("ValidateContainerAdjustment", request, opt.request_timeout);
    if (!answer.ok()) {
      if (is_fatal(answer.status())) disconnect(p.get(), "ValidateContainerAdjustment: " + answer.status().message());
      return Status(is_fatal(answer.status()) ? Code::unavailable : answer.status().code(),
                    "nri: validator " + p->id() + " failed: " + answer.status().message());
    }
    api::ValidateContainerAdjustmentResponse resp;
    if (!resp.ParseFromString(*answer)) {
      disconnect(p.get(), "ValidateContainerAdjustment: an answer that does not parse");
      return Status(Code::unavailable, "nri: validator " + p->id() + " answered what does not parse");
    }
    if (resp.reject())
      return failed_precondition("nri: validator \"" + p->id() + "\" rejected container adjustment, reason: " +
                                 (resp.reason().empty() ? "unknown rejection reason" : resp.reason()));
  }
  return ok_status();
}

Status NriPlugins::post_create_container(const api::PodSandbox& pod, const api::Container& container) {
  return notify(*impl_, api::NRI_POST_CREATE_CONTAINER, "PostCreateContainer",
                container_request<api::PostCreateContainerRequest>(pod, container).SerializeAsString(), &pod,
                &container);
}

Status NriPlugins::start_container(const api::PodSandbox& pod, const api::Container& container) {
  return notify(*impl_, api::NRI_START_CONTAINER, "StartContainer",
                container_request<api::StartContainerRequest>(pod, container).SerializeAsString(), &pod, &container);
}

Status NriPlugins::post_start_container(const api::PodSandbox& pod, const api::Container& container) {
  return notify(*impl_, api::NRI_POST_START_CONTAINER, "PostStartContainer",
                container_request<api::PostStartContainerRequest>(pod, container).SerializeAsString(), &pod,
                &container);
}

Result<std::vector<api::ContainerUpdate>> NriPlugins::update_container(const api::PodSandbox& pod,
                                                                       const api::Container& container,
                                                                       api::LinuxResources& resources) {
  MutexLock events(impl_->events_mu);
  UpdateSet others;
  std::map<std::string, std::string> owners;
  api::LinuxResources target;  // what plugins changed of the container's own resources
  for (const auto& p : impl_->subscribed(api::NRI_UPDATE_CONTAINER)) {
    auto r = container_request<api::UpdateContainerRequest>(pod, container);
    *r.mutable_linux_resources() = resources;
    auto bytes =
        deliver(*impl_, p, api::NRI_UPDATE_CONTAINER, "UpdateContainer", r.SerializeAsString(), &pod, &container);
    if (!bytes.ok()) return bytes.status();
    auto answer = parse_answer<api::UpdateContainerResponse>(*impl_, p, "UpdateContainer", *bytes);
    if (!answer.ok()) return answer.status();
    if (!*answer) continue;
    for (const auto& u : (*answer)->update()) {
      if (u.container_id() != container.id()) {
        if (Status s = others.add(p->id(), u); !s.ok()) return s;
        continue;
      }
      if (Status s = merge_resources(p->id(), u.container_id(), u.linux().resources(), target, owners); !s.ok())
        return s;
    }
    for (const auto& e : (*answer)->evict())
      if (impl_->opt.evict) impl_->opt.evict(e, p->id());
  }
  resources.MergeFrom(target);  // set fields of the plugins' replace the request's
  return others.take();
}

Status NriPlugins::post_update_container(const api::PodSandbox& pod, const api::Container& container) {
  return notify(*impl_, api::NRI_POST_UPDATE_CONTAINER, "PostUpdateContainer",
                container_request<api::PostUpdateContainerRequest>(pod, container).SerializeAsString(), &pod,
                &container);
}

Result<std::vector<api::ContainerUpdate>> NriPlugins::stop_container(const api::PodSandbox& pod,
                                                                     const api::Container& container) {
  MutexLock events(impl_->events_mu);
  UpdateSet others;
  for (const auto& p : impl_->subscribed(api::NRI_STOP_CONTAINER)) {
    auto r = container_request<api::StopContainerRequest>(pod, container);
    auto bytes = deliver(*impl_, p, api::NRI_STOP_CONTAINER, "StopContainer", r.SerializeAsString(), &pod, &container);
    if (!bytes.ok()) return bytes.status();
    auto answer = parse_answer<api::StopContainerResponse>(*impl_, p, "StopContainer", *bytes);
    if (!answer.ok()) return answer.status();
    if (!*answer) continue;
    for (const auto& u : (*answer)->update())
      if (u.container_id() != container.id())
        if (Status s = others.add(p->id(), u); !s.ok()) return s;
  }
  return others.take();
}

Status NriPlugins::remove_container(const api::PodSandbox& pod, const api::Container& container) {
  return notify(*impl_, api::NRI_REMOVE_CONTAINER, "RemoveContainer",
                container_request<api::RemoveContainerRequest>(pod, container).SerializeAsString(), &pod, &container);
}

}  // namespace berth::nri
