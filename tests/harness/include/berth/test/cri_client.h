// CriClient: the CRI calls integration tests make, one line each, against a test daemon; and
// DaemonTest, a fixture whose daemons' pods (and whatever runc still holds of them) are removed
// when the test ends, also when it failed.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "berth/cri_api.h"
#include "berth/test/daemon_process.h"

namespace berth::test {

namespace v1 = runtime::v1;

// The cgroup parent of this test process's pods, "/berth-test-pods/t<pid>": ctest runs tests in
// parallel, and a census or cleanup of the parent must see only this test's pods.
std::string test_cgroup_parent();
// A pod config in the test namespace, under test_cgroup_parent(), with its logs in a directory of
// this test process's own.
v1::PodSandboxConfig test_pod(const std::string& name);
// A container config running `cmd` (through /bin/sh -c when `shell`) from `image`, logging to
// <name>.log in the pod's log directory.
v1::ContainerConfig test_container(const std::string& name, const std::string& image,
                                   const std::vector<std::string>& cmd);

class CriClient {
 public:
  explicit CriClient(DaemonProcess& d);
  // Any CRI endpoint: a berthd the harness did not start (one running nested in a container).
  explicit CriClient(const std::shared_ptr<grpc::Channel>& channel);

  grpc::Status run_pod(const v1::PodSandboxConfig& config, std::string* id, const std::string& handler = "");
  grpc::Status stop_pod(const std::string& id);
  grpc::Status remove_pod(const std::string& id);
  grpc::Status pod_status(const std::string& id, v1::PodSandboxStatusResponse* out, bool verbose = true);
  std::vector<v1::PodSandbox> list_pods(const v1::PodSandboxFilter& filter = {});
  grpc::Status status(v1::StatusResponse* out, bool verbose = false);
  grpc::Status update_runtime_config(const std::string& pod_cidr);

  grpc::Status pull_image(const std::string& ref, std::string* image_ref = nullptr);
  std::vector<v1::Image> list_images();
  grpc::Status remove_image(const std::string& ref);
  grpc::Status create_container(const std::string& pod_id, const v1::ContainerConfig& config, std::string* id,
                                const v1::PodSandboxConfig& pod_config = {});
  grpc::Status start_container(const std::string& id);
  grpc::Status stop_container(const std::string& id, int64_t timeout_seconds);
  grpc::Status remove_container(const std::string& id);
  grpc::Status container_status(const std::string& id, v1::ContainerStatusResponse* out, bool verbose = false);
  grpc::Status container_stats(const std::string& id, v1::ContainerStatsResponse* out);
  std::vector<v1::Container> list_containers(const v1::ContainerFilter& filter = {});
  grpc::Status exec_sync(const std::string& id, const std::vector<std::string>& cmd, v1::ExecSyncResponse* out,
                         int64_t timeout_seconds = 0);
  grpc::Status update_resources(const std::string& id, const v1::LinuxContainerResources& resources);
  grpc::Status reopen_log(const std::string& id);

  v1::RuntimeService::Stub& runtime() { return *rt_; }
  v1::ImageService::Stub& images() { return *img_; }

  // Every call from now on ends with DEADLINE_EXCEEDED after `d` (0: no deadline), as kubelet's
  // runtimeRequestTimeout ends its calls: a test of a call that must not hang fails rather than hangs.
  void set_deadline(std::chrono::milliseconds d) { deadline_ = d; }

 private:
  void with_deadline(grpc::ClientContext& ctx) const;
  std::unique_ptr<v1::RuntimeService::Stub> rt_;
  std::unique_ptr<v1::ImageService::Stub> img_;
  std::chrono::milliseconds deadline_{0};
};

// A CRI call that must succeed, with the server's message when it did not.
#define ASSERT_OK(call)                                   \
  do {                                                    \
    grpc::Status status_ = (call);                        \
    ASSERT_TRUE(status_.ok()) << status_.error_message(); \
  } while (0)

class DaemonTest : public ::testing::Test {
 protected:
  void TearDown() override;
  // Starts a daemon owned by the fixture (the test fails when it does not come up).
  DaemonProcess& daemon(DaemonOptions options = {});
  // A daemon on the given paths, e.g. one that takes over an earlier daemon's root and state.
  DaemonProcess& daemon_at(DaemonOptions options, const std::string& socket, const std::string& root,
                           const std::string& state);
  // A temp dir of the test's that outlives its daemons (removed after them, also on failure).
  TempDir& scratch();

 private:
  std::vector<std::unique_ptr<TempDir>> scratch_;  // declared first: destroyed after the daemons
  std::vector<std::unique_ptr<DaemonProcess>> owned_;
};

}  // namespace berth::test
