// CriClient: the CRI calls integration tests make, one line each, against a test daemon; and
// DaemonTest, a fixture whose daemons' pods (and whatever runc still holds of them) are removed
// when the test ends, also when it failed.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/cri_api.h"
#include "berth/test/daemon_process.h"

namespace berth::test {

namespace v1 = runtime::v1;

// A pod config in the test namespace, under the /berth-test-pods cgroup parent.
v1::PodSandboxConfig test_pod(const std::string& name);

class CriClient {
 public:
  explicit CriClient(DaemonProcess& d);

  grpc::Status run_pod(const v1::PodSandboxConfig& config, std::string* id, const std::string& handler = "");
  grpc::Status stop_pod(const std::string& id);
  grpc::Status remove_pod(const std::string& id);
  grpc::Status pod_status(const std::string& id, v1::PodSandboxStatusResponse* out, bool verbose = true);
  std::vector<v1::PodSandbox> list_pods(const v1::PodSandboxFilter& filter = {});
  grpc::Status status(v1::StatusResponse* out, bool verbose = false);
  grpc::Status update_runtime_config(const std::string& pod_cidr);

  v1::RuntimeService::Stub& runtime() { return *rt_; }
  v1::ImageService::Stub& images() { return *img_; }

 private:
  std::unique_ptr<v1::RuntimeService::Stub> rt_;
  std::unique_ptr<v1::ImageService::Stub> img_;
};

class DaemonTest : public ::testing::Test {
 protected:
  void TearDown() override;
  // Starts a daemon owned by the fixture (the test fails when it does not come up).
  DaemonProcess& daemon(DaemonOptions options = {});
  // A daemon the test made itself on shared dirs: cleaned up the same way.
  void adopt(DaemonProcess& d);

 private:
  std::vector<std::unique_ptr<DaemonProcess>> owned_;
  std::vector<DaemonProcess*> daemons_;
  std::vector<std::string> states_;
};

}  // namespace berth::test
