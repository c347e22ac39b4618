// PodFixture: a local docker-registry with the project's busybox image for the whole suite, and
// per test a berthd with the image pulled and one ready pod logging under a temp dir; helpers to
// run containers in it and wait for what they do.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"

namespace berth::test {

using namespace std::chrono_literals;

// Daemons and the local registry with the busybox test image, for the whole suite.
class BusyboxRegistryTest : public DaemonTest {
 protected:
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    push_test_images(registry_->url(), {"--only", "busybox"});
  }
  static void TearDownTestSuite() {
    delete registry_;
    registry_ = nullptr;
  }
  static std::string image() { return registry_->host() + "/test/busybox:latest"; }
  static inline RegistryProcess* registry_ = nullptr;
};

class PodFixture : public BusyboxRegistryTest {
 protected:
  void SetUp() override { logs_ = std::make_unique<TempDir>("berth-logs"); }

  // A daemon, the busybox image pulled, and a ready pod logging under the test's log dir.
  CriClient& ready(const std::string& pod_name = "pod", DaemonOptions options = {}) {
    d_ = &daemon(std::move(options));
    cri_ = std::make_unique<CriClient>(*d_);
    EXPECT_TRUE(cri_->pull_image(image()).ok());
    pod_config_ = test_pod(pod_name);
    if (!cgroup_parent_.empty()) pod_config_.mutable_linux()->set_cgroup_parent(cgroup_parent_);
    pod_config_.set_log_directory(logs_->path());
    grpc::Status s = cri_->run_pod(pod_config_, &pod_);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return *cri_;
  }
  v1::ContainerConfig shell_container(const std::string& name, const std::string& script) {
    return test_container(name, image(), {"/bin/sh", "-c", script});
  }
  // Creates and starts; returns the id.
  std::string run(const v1::ContainerConfig& c) {
    std::string id;
    grpc::Status s = cri_->create_container(pod_, c, &id, pod_config_);
    EXPECT_TRUE(s.ok()) << s.error_message();
    s = cri_->start_container(id);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return id;
  }
  v1::ContainerStatus status(const std::string& id, bool verbose = false) {
    v1::ContainerStatusResponse r;
    grpc::Status s = cri_->container_status(id, &r, verbose);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r.status();
  }
  // Waits for the container to exit (the monitor reports it; no test sleeps for a fixed time).
  v1::ContainerStatus wait_exited(const std::string& id, std::chrono::seconds timeout = 20s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto st = status(id);
      if (st.state() == v1::CONTAINER_EXITED || std::chrono::steady_clock::now() > deadline) return st;
      std::this_thread::sleep_for(20ms);
    }
  }
  bool wait_for_file_text(const std::string& path, const std::string& text, std::chrono::seconds timeout = 10s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (read_file(path).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  std::string exec_out(const std::string& id, const std::vector<std::string>& cmd) {
    v1::ExecSyncResponse r;
    grpc::Status s = cri_->exec_sync(id, cmd, &r, 10);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r.stdout();
  }
  std::string log_of(const std::string& name) { return read_file(logs_->path() + "/" + name + ".log"); }
  // Streaming URLs from the Exec and PortForward rpcs (for the tests' streaming client).
  std::string exec_url(const std::string& id, const std::vector<std::string>& cmd, bool in, bool out, bool err,
                       bool tty = false) {
    grpc::ClientContext ctx;
    v1::ExecRequest req;
    req.set_container_id(id);
    for (const auto& a : cmd) req.add_cmd(a);
    req.set_stdin(in);
    req.set_stdout(out);
    req.set_stderr(err);
    req.set_tty(tty);
    v1::ExecResponse resp;
    grpc::Status s = cri_->runtime().Exec(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.url();
  }
  std::string port_forward_url(const std::vector<int32_t>& ports = {}) {
    grpc::ClientContext ctx;
    v1::PortForwardRequest req;
    req.set_pod_sandbox_id(pod_);
    for (int32_t p : ports) req.add_port(p);
    v1::PortForwardResponse resp;
    grpc::Status s = cri_->runtime().PortForward(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.url();
  }

  // The numbers a counting container printed, in order (the last word of each line of its log).
  static std::vector<long> numbers(const std::string& log) {
    std::vector<long> out;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
      size_t sp = line.rfind(' ');
      if (sp == std::string::npos) continue;
      try {
        out.push_back(std::stol(line.substr(sp + 1)));
      } catch (...) {
      }
    }
    return out;
  }
  // A dir's entry names, sorted; none when it cannot be read.
  static std::vector<std::string> dir_entries(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::unique_ptr<TempDir> logs_;
  DaemonProcess* d_ = nullptr;
  std::unique_ptr<CriClient> cri_;
  v1::PodSandboxConfig pod_config_;
  // The pods' cgroup parent when not test_pod's shared one (a test that takes a census of it).
  std::string cgroup_parent_;
  std::string pod_;
};

}  // namespace berth::test
