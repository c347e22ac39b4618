// berthd under a memory limit, made for real: it runs in a memory cgroup of the test's (64 MiB,
// as an operator's MemoryMax= on berthd.service would set), joined before its first instruction
// through a wrapper, so everything it and its helpers (berth-monitor, berth-pull) charge counts.
// A large image's pull and open exec sessions fit; pods are started until berthd refuses new
// work with RESOURCE_EXHAUSTED naming the limit (their network namespaces' kernel memory is
// charged to it), nothing is OOM-killed, status, stop and remove go on, and once pods are gone
// new ones start again.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <atomic>
#include <future>
#include <mutex>

#include "berth/test/host_cgroup.h"
#include "berth/test/streaming_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

constexpr int kPods = 100;
// Each exec session is a runtime process (runc exec) in berthd's cgroup for its whole length.
constexpr int kSessions = 4;
constexpr uint64_t kLimit = 64ull << 20;

// v1's memory.stat or v2's memory.events: how many processes the kernel killed for the limit.
uint64_t oom_kills(const std::string& dir) {
  std::istringstream in(read_file(dir + (host_cgroup_v2() ? "/memory.events" : "/memory.oom_control")));
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v)
    if (k == "oom_kill") return v;
  return 0;
}

class MemoryLimit : public PodFixture {
 protected:
  static void SetUpTestSuite() {
    PodFixture::SetUpTestSuite();
    push_test_images(registry_->url(), {"--only", "big", "--big", "200"});
  }
  void SetUp() override {
    PodFixture::SetUp();
    cgroup_ = host_cgroup_dir("/berth-memory-limit-" + std::to_string(::getpid()), "memory");
    fs::create_directories(cgroup_);
    set_limit(kLimit);
    wrapper_ = scratch() / "berthd-in-cgroup";
    // As berthd.service runs it: OOMScoreAdjust=-999 (where the kernel lets it be set).
    write_file(wrapper_,
               "#!/bin/sh\necho -999 2>/dev/null > /proc/self/oom_score_adj; echo $$ > " + cgroup_ +
                   "/cgroup.procs && exec " + berthd_path() + " \"$@\"\n",
               0755);
  }
  void TearDown() override {
    PodFixture::TearDown();
    if (d_) d_->stop();
    // Monitors whose containers are gone leave it empty; what a failed test left is killed.
    for (int i = 0; i < 100 && ::rmdir(cgroup_.c_str()) != 0 && errno == EBUSY; ++i) {
      std::istringstream procs(read_file(cgroup_ + "/cgroup.procs"));
      for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(50ms);
    }
  }
  // Into the kernel's file as it is (write_file would also set its mode).
  void set_limit(uint64_t bytes) {
    std::ofstream(cgroup_ + (host_cgroup_v2() ? "/memory.max" : "/memory.limit_in_bytes")) << bytes;
  }
  DaemonProcess& start() {
    const char* before = ::getenv("BERTHD");
    std::string saved = before ? before : "";
    ::setenv("BERTHD", wrapper_.c_str(), 1);
    d_ = &daemon({});
    if (saved.empty())
      ::unsetenv("BERTHD");
    else
      ::setenv("BERTHD", saved.c_str(), 1);
    cri_ = std::make_unique<CriClient>(*d_);
    return *d_;
  }

  std::string cgroup_, wrapper_;
};

TEST_F(MemoryLimit, PullsPodsAndSessionsFitAndAtTheLimitNewWorkIsRefused) {
  if (berthd_sanitized()) GTEST_SKIP() << "a sanitizer's shadow memory is not berthd's";
  start();
  ASSERT_NE(read_file("/proc/" + std::to_string(d_->pid()) + "/cgroup").find(cgroup_.substr(cgroup_.rfind('/'))),
            std::string::npos)
      << "berthd is not in the test's cgroup";
  ASSERT_OK(cri_->pull_image(registry_->host() + "/test/big:v1"));
  ASSERT_OK(cri_->pull_image(image()));

  // Pods until berthd says its memory is used up: their network namespaces' kernel memory is
  // charged to berthd's cgroup, which made them (as containerd's and CRI-O's). A call waits in
  // berthd while starts under way may free room; refused, a worker stops (kubelet would retry).
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> pods;
  std::vector<std::string> refusals;
  auto start_pods = [&](int first, int count) {
    std::vector<std::future<void>> workers;
    for (int w = 0; w < 4; ++w)
      workers.push_back(std::async(std::launch::async, [&, w] {
        CriClient cri(*d_);
        for (int i = first + w; i < first + count; i += 4) {
          auto config = test_pod("mem-" + std::to_string(i));
          config.set_log_directory(logs_->path() + "/" + std::to_string(i));
          std::string pod_id, id;
          grpc::Status s = cri.run_pod(config, &pod_id);
          if (s.ok()) s = cri.create_container(pod_id, shell_container("sleeper", "sleep 100000"), &id, config);
          if (s.ok()) s = cri.start_container(id);
          std::lock_guard<std::mutex> lock(mu);
          if (!pod_id.empty()) pods.push_back({pod_id, s.ok() ? id : ""});
          if (s.ok()) continue;
          refusals.push_back(s.error_message());
          EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
          return;
        }
      }));
    for (auto& f : workers) f.get();
  };
  start_pods(0, 10);
  ASSERT_TRUE(refusals.empty()) << refusals.front();

  std::vector<std::unique_ptr<RemoteCommandClient>> sessions;
  for (int i = 0; i < kSessions; ++i) {
    StreamOptions o{.stdin = true, .stdout = true, .stderr = false};
    auto c = RemoteCommandClient::connect(exec_url(pods[i].second, {"cat"}, true, true, false), o);
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_TRUE((*c)->send_stdin("hello\n").ok());
    ASSERT_TRUE((*c)->wait_stdout("hello", std::chrono::seconds(10)));
    sessions.push_back(std::move(*c));
  }

  start_pods(10, kPods - 10);
  size_t running = 0;
  for (const auto& p : pods) running += !p.second.empty();
  std::printf("[ figures  ] a %llu MiB limit: %zu of %d pods running, then new work refused (%zu refusals)\n",
              static_cast<unsigned long long>(kLimit >> 20), running, kPods, refusals.size());
  EXPECT_TRUE(d_->running());
  EXPECT_EQ(oom_kills(cgroup_), 0u);
  for (const auto& why : refusals) EXPECT_NE(why.find("near its cgroup's limit"), std::string::npos) << why;
  // What kubelet reads and what frees memory go on; then there is room again, without a restart.
  EXPECT_EQ(cri_->list_pods().size(), pods.size());
  EXPECT_EQ(status(pods[0].second).state(), v1::CONTAINER_RUNNING);
  sessions.clear();
  for (const auto& p : pods) {
    EXPECT_TRUE(cri_->stop_pod(p.first).ok());
    EXPECT_TRUE(cri_->remove_pod(p.first).ok());
  }
  std::string id;
  ASSERT_OK(cri_->run_pod(test_pod("after"), &id));
  EXPECT_TRUE(d_->running());
  EXPECT_EQ(oom_kills(cgroup_), 0u);
}

}  // namespace
}  // namespace berth::test
