// CRI calls for tests and the cleanup fixture; see cri_client.h.
#include "berth/test/cri_client.h"

#include <unistd.h>

#include <sstream>

#include "berth/test/helper_process.h"

namespace berth::test {

v1::PodSandboxConfig test_pod(const std::string& name) {
  v1::PodSandboxConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_namespace_("berth-test");
  c.mutable_metadata()->set_uid("uid-" + name);
  c.set_hostname(name);
  c.set_log_directory("/tmp/berth-test-logs/" + name);
  (*c.mutable_labels())["app"] = name;
  c.mutable_linux()->set_cgroup_parent("/berth-test-pods");
  return c;
}

CriClient::CriClient(DaemonProcess& d) : rt_(d.runtime()), img_(d.images()) {}

grpc::Status CriClient::run_pod(const v1::PodSandboxConfig& config, std::string* id, const std::string& handler) {
  grpc::ClientContext ctx;
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
  v1::StopPodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  v1::StopPodSandboxResponse resp;
  return rt_->StopPodSandbox(&ctx, req, &resp);
}

grpc::Status CriClient::remove_pod(const std::string& id) {
  grpc::ClientContext ctx;
  v1::RemovePodSandboxRequest req;
  req.set_pod_sandbox_id(id);
  v1::RemovePodSandboxResponse resp;
  return rt_->RemovePodSandbox(&ctx, req, &resp);
}

grpc::Status CriClient::pod_status(const std::string& id, v1::PodSandboxStatusResponse* out, bool verbose) {
  grpc::ClientContext ctx;
  v1::PodSandboxStatusRequest req;
  req.set_pod_sandbox_id(id);
  req.set_verbose(verbose);
  return rt_->PodSandboxStatus(&ctx, req, out);
}

std::vector<v1::PodSandbox> CriClient::list_pods(const v1::PodSandboxFilter& filter) {
  grpc::ClientContext ctx;
  v1::ListPodSandboxRequest req;
  *req.mutable_filter() = filter;
  v1::ListPodSandboxResponse resp;
  grpc::Status s = rt_->ListPodSandbox(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return {resp.items().begin(), resp.items().end()};
}

grpc::Status CriClient::status(v1::StatusResponse* out, bool verbose) {
  grpc::ClientContext ctx;
  v1::StatusRequest req;
  req.set_verbose(verbose);
  return rt_->Status(&ctx, req, out);
}

grpc::Status CriClient::update_runtime_config(const std::string& pod_cidr) {
  grpc::ClientContext ctx;
  v1::UpdateRuntimeConfigRequest req;
  req.mutable_runtime_config()->mutable_network_config()->set_pod_cidr(pod_cidr);
  v1::UpdateRuntimeConfigResponse resp;
  return rt_->UpdateRuntimeConfig(&ctx, req, &resp);
}

DaemonProcess& DaemonTest::daemon(DaemonOptions options) {
  owned_.push_back(std::make_unique<DaemonProcess>(std::move(options)));
  adopt(*owned_.back());
  EXPECT_TRUE(owned_.back()->start()) << owned_.back()->log();
  return *owned_.back();
}

void DaemonTest::adopt(DaemonProcess& d) {
  daemons_.push_back(&d);
  states_.push_back(d.state());
}

void DaemonTest::TearDown() {
  for (DaemonProcess* d : daemons_) {
    if (!d->running()) continue;
    CriClient cri(*d);
    for (const auto& p : cri.list_pods()) (void)cri.remove_pod(p.id());
  }
  // Whatever a failed test left behind (a daemon that died, a sandbox half made): runc's own list.
  for (const auto& state : states_) {
    std::string root = state + "/runtime/runc";
    std::istringstream ids(shell("runc --root " + root + " list -q 2>/dev/null"));
    for (std::string id; std::getline(ids, id);)
      if (!id.empty()) shell("runc --root " + root + " delete -f " + id + " 2>/dev/null");
  }
  for (const char* ctl : {"memory", "cpu", "cpuacct", "pids", "blkio", "devices", "freezer", "cpuset", "systemd", "unified"})
    ::rmdir((std::string("/sys/fs/cgroup/") + ctl + "/berth-test-pods").c_str());
}

}  // namespace berth::test
