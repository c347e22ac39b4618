// DaemonProcess: a real berthd started on temp dirs and a temp socket for one test, with a CRI
// client channel to it; stopped with SIGTERM (SIGKILL if it hangs) and cleaned up on destruction.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "berth/cri_api.h"
#include "berth/test/temp_dir.h"
#include "berth/test/test_network.h"

namespace berth::test {

struct DaemonOptions {
  std::string config_toml;  // written to <dir>/berth.toml and passed with --config
  std::vector<std::string> extra_args;
  bool wait_ready = true;  // wait for the socket to answer Version
  // Pods get a real bridge network (TestNetwork) unless the config names its own cni_conf_dir;
  // false: an empty conf dir of the daemon's own (NetworkReady false).
  bool test_network = true;
  // A network shared by daemons that take over each other's state (restart tests): it must
  // outlive them all, as the pods do.
  std::shared_ptr<TestNetwork> network;
  // NAME=value pairs added to berthd's environment (BERTH_FAULT_POINT arms a fault point).
  std::vector<std::string> env;
  // Passed as --log-level; empty: no flag, the config's log_level rules (config reload tests).
  std::string log_level = "debug";
};

class DaemonProcess {
 public:
  explicit DaemonProcess(DaemonOptions opts = {});
  // A second daemon sharing another's directories (for refusal tests): give its paths.
  DaemonProcess(DaemonOptions opts, std::string socket, std::string root, std::string state);
  ~DaemonProcess();

  bool start();  // false when berthd did not come up; log() says why
  int stop(int signal = SIGTERM, std::chrono::seconds timeout = std::chrono::seconds(20));
  // Waits for the process to exit on its own; returns its exit code or -1 on timeout.
  int wait_exit(std::chrono::milliseconds timeout);
  bool running();
  pid_t pid() const { return pid_; }

  const std::string& socket() const { return socket_; }
  const std::string& root() const { return root_; }
  const std::string& state() const { return state_; }
  std::string dir() const { return dir_.path(); }
  std::string log() const;
  // The bridge network the daemon's pods get; null with test_network false or a named conf dir.
  TestNetwork* network() const { return network_.get(); }

  std::shared_ptr<grpc::Channel> channel();
  std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime();
  std::unique_ptr<runtime::v1::ImageService::Stub> images();

 private:
  void expect_no_sanitizer_report() const;
  std::shared_ptr<TestNetwork> network_;  // outlives the daemon (destroyed after it stops)
  TempDir dir_;
  DaemonOptions opts_;
  std::string socket_, root_, state_, log_path_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// The runtime berthd's default handler runs in the tests: $BERTH_TEST_RUNTIME (crun, to run a
// suite against crun), else runc. A config naming its own default_runtime keeps it.
std::string test_runtime();

// The berthd binary under test: $BERTHD when set (a benchmark of another build), else the one
// CMake built.
std::string berthd_path();
// Whether that berthd (and the helpers beside it) is a sanitizer build: this test build's own, or
// the one BERTHD names when BERTHD_SANITIZED=1 (scripts/test's ASan stage runs the plain build's
// e2e tests against its berthd). A sanitizer's quarantine keeps freed memory resident, and it
// reports a helper's SIGSEGV.
bool berthd_sanitized();
// The RLIMIT_NOFILE a container gets from berthd's default default_ulimits on this host: 1024 soft,
// 524288 hard, lowered to the test's (berthd's) own hard limit where it lacks CAP_SYS_RESOURCE.
std::pair<uint64_t, uint64_t> default_container_nofile();

// The slack an RSS bound allows for that quarantine (KiB): none for a plain berthd.
long sanitizer_rss_slack_kib();

}  // namespace berth::test
