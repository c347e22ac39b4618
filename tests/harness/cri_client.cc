// CRI calls for tests and the cleanup fixture; see cri_client.h.
#include "berth/test/cri_client.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "berth/test/helper_process.h"
#include "berth/test/host_cgroup.h"

namespace berth::test {

std::string test_cgroup_parent() { return "/berth-test-pods/t" + std::to_string(::getpid()); }

v1::PodSandboxConfig test_pod(const std::string& name) {
  v1::PodSandboxConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_namespace_("berth-test");
  c.mutable_metadata()->set_uid("uid-" + name);
  c.set_hostname(name);
  c.set_log_directory("/tmp/berth-test-logs/" + std::to_string(::getpid()) + "/" + name);
  (*c.mutable_labels())["app"] = name;
  c.mutable_linux()->set_cgroup_parent(test_cgroup_parent());
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  return c;
}

v1::ContainerConfig test_container(const std::string& name, const std::string& image,
                                   const std::vector<std::string>& cmd) {
  v1::ContainerConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_image()->set_image(image);
  for (const auto& a : cmd) c.add_command(a);
  c.set_log_path(name + ".log");
  (*c.mutable_labels())["container"] = name;
  // kubelet's default: a PID namespace of the container's own (shareProcessNamespace off).
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  return c;
}

CriClient::CriClient(DaemonProcess& d) : rt_(d.runtime()), img_(d.images()) {}

CriClient::CriClient(const std::shared_ptr<grpc::Channel>& channel)
    : rt_(v1::RuntimeService::NewStub(channel)), img_(v1::ImageService::NewStub(channel)) {}

grpc::Status CriClient::run_pod(const v1::PodSandboxConfig& config, std::string* id, const std::string& handler) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::RunPodSandboxRequest req;
  *req.mutable_config() = config;
  req.set_runtime_handler(handler);
  v1::RunPodSandboxResponse resp;
  grpc::Status s = rt_->RunPodSandbox(&ctx, req, &resp);
  if (id) *id = resp.pod_sandbox_id();
  return s;
}

grpc::Status CriClient::stop_pod(const std::string& id) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::StopPodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  v1::StopPodSandboxResponse resp;
  return rt_->StopPodSandbox(&ctx, req, &resp);
}

void CriClient::with_deadline(grpc::ClientContext& ctx) const {
  if (deadline_.count() > 0) ctx.set_deadline(std::chrono::system_clock::now() + deadline_);
}

grpc::Status CriClient::container_stats(const std::string& id, v1::ContainerStatsResponse* out) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::ContainerStatsRequest req;
  req.set_container_id(id);
  return rt_->ContainerStats(&ctx, req, out);
}

grpc::Status CriClient::remove_pod(const std::string& id) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::RemovePodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  v1::RemovePodSandboxResponse resp;
  return rt_->RemovePodSandbox(&ctx, req, &resp);
}

grpc::Status CriClient::pod_status(const std::string& id, v1::PodSandboxStatusResponse* out, bool verbose) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::PodSandboxStatusRequest req;
  req.set_pod_sandbox_id(id);
  req.set_verbose(verbose);
  return rt_->PodSandboxStatus(&ctx, req, out);
}

std::vector<v1::PodSandbox> CriClient::list_pods(const v1::PodSandboxFilter& filter) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::ListPodSandboxRequest req;
  *req.mutable_filter() = filter;
  v1::ListPodSandboxResponse resp;
  grpc::Status s = rt_->ListPodSandbox(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return {resp.items().begin(), resp.items().end()};
}

grpc::Status CriClient::status(v1::StatusResponse* out, bool verbose) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::StatusRequest req;
  req.set_verbose(verbose);
  return rt_->Status(&ctx, req, out);
}

grpc::Status CriClient::update_runtime_config(const std::string& pod_cidr) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::UpdateRuntimeConfigRequest req;
  req.mutable_runtime_config()->mutable_network_config()->set_pod_cidr(pod_cidr);
  v1::UpdateRuntimeConfigResponse resp;
  return rt_->UpdateRuntimeConfig(&ctx, req, &resp);
}

grpc::Status CriClient::pull_image(const std::string& ref, std::string* image_ref) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::PullImageRequest req;
  req.mutable_image()->set_image(ref);
  v1::PullImageResponse resp;
  grpc::Status s = img_->PullImage(&ctx, req, &resp);
  if (image_ref) *image_ref = resp.image_ref();
  return s;
}

std::vector<v1::Image> CriClient::list_images() {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::ListImagesResponse resp;
  grpc::Status s = img_->ListImages(&ctx, v1::ListImagesRequest(), &resp);
  if (!s.ok()) ADD_FAILURE() << "ListImages: " << s.error_message();
  return {resp.images().begin(), resp.images().end()};
}

grpc::Status CriClient::remove_image(const std::string& ref) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::RemoveImageRequest req;
  req.mutable_image()->set_image(ref);
  v1::RemoveImageResponse resp;
  return img_->RemoveImage(&ctx, req, &resp);
}

grpc::Status CriClient::create_container(const std::string& pod_id, const v1::ContainerConfig& config, std::string* id,
                                         const v1::PodSandboxConfig& pod_config) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::CreateContainerRequest req;
  req.set_pod_sandbox_id(pod_id);
  *req.mutable_config() = config;
  *req.mutable_sandbox_config() = pod_config;
  v1::CreateContainerResponse resp;
  grpc::Status s = rt_->CreateContainer(&ctx, req, &resp);
  if (id) *id = resp.container_id();
  return s;
}

grpc::Status CriClient::start_container(const std::string& id) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::StartContainerRequest req;
  req.set_container_id(id);
  v1::StartContainerResponse resp;
  return rt_->StartContainer(&ctx, req, &resp);
}

grpc::Status CriClient::stop_container(const std::string& id, int64_t timeout_seconds) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::StopContainerRequest req;
  req.set_container_id(id);
  req.set_timeout(timeout_seconds);
  v1::StopContainerResponse resp;
  return rt_->StopContainer(&ctx, req, &resp);
}

grpc::Status CriClient::remove_container(const std::string& id) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::RemoveContainerRequest req;
  req.set_container_id(id);
  v1::RemoveContainerResponse resp;
  return rt_->RemoveContainer(&ctx, req, &resp);
}

grpc::Status CriClient::container_status(const std::string& id, v1::ContainerStatusResponse* out, bool verbose) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::ContainerStatusRequest req;
  req.set_container_id(id);
  req.set_verbose(verbose);
  return rt_->ContainerStatus(&ctx, req, out);
}

std::vector<v1::Container> CriClient::list_containers(const v1::ContainerFilter& filter) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::ListContainersRequest req;
  *req.mutable_filter() = filter;
  v1::ListContainersResponse resp;
  grpc::Status s = rt_->ListContainers(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return {resp.containers().begin(), resp.containers().end()};
}

grpc::Status CriClient::exec_sync(const std::string& id, const std::vector<std::string>& cmd, v1::ExecSyncResponse* out,
                                  int64_t timeout_seconds) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::ExecSyncRequest req;
  req.set_container_id(id);
  for (const auto& a : cmd) req.add_cmd(a);
  req.set_timeout(timeout_seconds);
  return rt_->ExecSync(&ctx, req, out);
}

grpc::Status CriClient::update_resources(const std::string& id, const v1::LinuxContainerResources& resources) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::UpdateContainerResourcesRequest req;
  req.set_container_id(id);
  *req.mutable_linux() = resources;
  v1::UpdateContainerResourcesResponse resp;
  return rt_->UpdateContainerResources(&ctx, req, &resp);
}

grpc::Status CriClient::reopen_log(const std::string& id) {
  grpc::ClientContext ctx;
  with_deadline(ctx);
  v1::ReopenContainerLogRequest req;
  req.set_container_id(id);
  v1::ReopenContainerLogResponse resp;
  return rt_->ReopenContainerLog(&ctx, req, &resp);
}

DaemonProcess& DaemonTest::daemon(DaemonOptions options) {
  owned_.push_back(std::make_unique<DaemonProcess>(std::move(options)));
  EXPECT_TRUE(owned_.back()->start()) << owned_.back()->log();
  return *owned_.back();
}

DaemonProcess& DaemonTest::daemon_at(DaemonOptions options, const std::string& socket, const std::string& root,
                                     const std::string& state) {
  owned_.push_back(std::make_unique<DaemonProcess>(std::move(options), socket, root, state));
  EXPECT_TRUE(owned_.back()->start()) << owned_.back()->log();
  return *owned_.back();
}

TempDir& DaemonTest::scratch() {
  scratch_.push_back(std::make_unique<TempDir>());
  return *scratch_.back();
}

void DaemonTest::TearDown() {
  for (auto& d : owned_) {
    if (!d->running()) continue;
    CriClient cri(*d);
    for (const auto& p : cri.list_pods()) (void)cri.remove_pod(p.id());
  }
  // Whatever a failed test left behind (a daemon that died, a sandbox half made): the runtime's
  // own list.
  for (auto& d : owned_)
    for (const std::string& rt : {std::string("runc"), test_runtime()}) {
      std::string root = d->state() + "/runtime/" + rt;
      if (!std::filesystem::exists(root)) continue;
      std::istringstream ids(shell(rt + " --root " + root + " list -q 2>/dev/null"));
      for (std::string id; std::getline(ids, id);)
        if (!id.empty()) shell(rt + " --root " + root + " delete -f " + id + " 2>/dev/null");
    }
  // Cgroups of this process's pods whose processes are gone (runc cannot remove a cgroup while a
  // killed process in it waits to be reaped by pid 1), then its parent, and the shared one above
  // it when no other test uses it any more.
  for (const std::string& root : host_cgroup_roots()) {
    std::string parent = root + test_cgroup_parent();
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(parent, ec))
      if (e.is_directory()) ::rmdir(e.path().c_str());
    ::rmdir(parent.c_str());
    ::rmdir((root + "/berth-test-pods").c_str());
  }
  std::error_code ec;
  std::filesystem::remove_all("/tmp/berth-test-logs/" + std::to_string(::getpid()), ec);
  ::rmdir("/tmp/berth-test-logs");
}

}  // namespace berth::test
