// A CNI plugin that fails from outside, made for real: the test's network chains a plugin of its
// own after Debian's bridge (host-local) and portmap, a script that passes the result on unless a
// marker file of the test's makes it hang (sleep for good) or die of SIGKILL in one CNI command.
// berthd's plugin timeout is a few seconds: each call answers with an error naming the plugin, a
// failed DEL is retried at removal, and no address, veth, rule or netns is left.
#include <signal.h>

#include <filesystem>
#include <future>
#include <thread>

#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

const std::string kCniFaultsCgroupParent = "/berth-cni-faults-" + std::to_string(::getpid());
constexpr const char* kPlugin = "berth-test-faulty";

class CniFaults : public PodFixture {
 protected:
  void SetUp() override {
    PodFixture::SetUp();
    plugins_ = std::make_unique<TempDir>("berth-faulty-cni");
    const std::string dir = plugins_->path();
    write_file(dir + "/" + kPlugin,
               "#!/usr/bin/python3\n"
               "import json, os, signal, sys, time\n"
               "conf = json.load(sys.stdin)\n"
               "cmd = os.environ.get('CNI_COMMAND', '')\n"
               "d = conf['markers']\n"
               "if os.path.exists(f'{d}/hang-{cmd}'):\n"
               "    open(f'{d}/hung-{cmd}', 'w').close()\n"
               "    time.sleep(100000)\n"
               "if os.path.exists(f'{d}/crash-{cmd}'):\n"
               "    os.kill(os.getpid(), signal.SIGKILL)\n"
               "if cmd == 'ADD':\n"
               "    json.dump(conf.get('prevResult', {}), sys.stdout)\n"
               "elif cmd == 'VERSION':\n"
               "    json.dump({'cniVersion': '1.0.0', 'supportedVersions': ['0.4.0', '1.0.0']}, sys.stdout)\n",
               0755);
    net_ = std::make_shared<TestNetwork>();
    net_->write_conflist({std::string(R"({"type": ")") + kPlugin + R"(", "markers": ")" + dir + R"("})"});
    d_ = &daemon(
        {.config_toml = "cni_plugin_dirs = [\"" + dir + "\", \"/usr/lib/cni\"]\ncni_plugin_timeout_seconds = 4\n",
         .network = net_});
    cri_ = std::make_unique<CriClient>(*d_);
    // kubelet's deadline (runtimeRequestTimeout, 2 min) is far above the plugin timeout; this one
    // fails a call that waited for the plugin more than a few times over.
    cri_->set_deadline(30s);
  }
  void TearDown() override {
    shell("pkill -f '^/usr/bin/python3 " + plugins_->path() + "/' 2>/dev/null");
    PodFixture::TearDown();
    if (d_) release_host_leftovers(scope());
  }
  LeftoverScope scope() const { return {d_->root(), d_->state(), kCniFaultsCgroupParent, net_.get()}; }
  void mark(const std::string& name) { write_file(plugins_->path() + "/" + name, ""); }
  void unmark(const std::string& name) { fs::remove(plugins_->path() + "/" + name); }
  v1::PodSandboxConfig pod(const std::string& name) {
    auto c = test_pod(name);
    c.set_log_directory(logs_->path());
    c.mutable_linux()->set_cgroup_parent(kCniFaultsCgroupParent);
    return c;
  }
  void expect_nothing_left() {
    EXPECT_EQ(net_->allocated_ips(), std::vector<std::string>{});
    EXPECT_EQ(net_->veths(), std::vector<std::string>{});
    EXPECT_EQ(host_leftovers(scope()), std::vector<std::string>{});
  }

  std::unique_ptr<TempDir> plugins_;
  std::shared_ptr<TestNetwork> net_;
};

class CniAddFault : public CniFaults, public ::testing::WithParamInterface<const char*> {};

// The ADD fails: RunPodSandbox says which plugin and why, and what the plugins before it made
// (bridge's veth, host-local's address, portmap's rules) goes with the DEL of the undo.
TEST_P(CniAddFault, RunPodSandboxFailsNamingThePluginAndLeavesNothing) {
  mark(std::string(GetParam()) + "-ADD");
  std::string id;
  grpc::Status s = cri_->run_pod(pod("add-fault"), &id);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find(kPlugin), std::string::npos) << s.error_message();
  EXPECT_TRUE(cri_->list_pods().empty());
  if (std::string(GetParam()) == "hang") {
    EXPECT_TRUE(fs::exists(plugins_->path() + "/hung-ADD")) << "no hang: proves nothing";
  }
  expect_nothing_left();
  // The same pod once the plugin works again.
  unmark(std::string(GetParam()) + "-ADD");
  ASSERT_OK(cri_->run_pod(pod("add-fault"), &id));
  ASSERT_OK(cri_->stop_pod(id));
  ASSERT_OK(cri_->remove_pod(id));
  expect_nothing_left();
}

INSTANTIATE_TEST_SUITE_P(Plugin, CniAddFault, ::testing::Values("hang", "crash"),
                         [](const auto& info) { return std::string(info.param); });

class CniDelFault : public CniFaults, public ::testing::WithParamInterface<const char*> {};

// The DEL fails at StopPodSandbox: the stop says which plugin; the address stays allocated until
// a DEL succeeds, which RemovePodSandbox (kubelet's next step) tries again.
TEST_P(CniDelFault, StopPodSandboxFailsNamingThePluginAndRemovalRetriesTheDel) {
  std::string id;
  ASSERT_OK(cri_->run_pod(pod("del-fault"), &id));
  ASSERT_EQ(net_->allocated_ips().size(), 1u);
  mark(std::string(GetParam()) + "-DEL");
  grpc::Status s = cri_->stop_pod(id);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find(kPlugin), std::string::npos) << s.error_message();
  if (std::string(GetParam()) == "hang") {
    EXPECT_TRUE(fs::exists(plugins_->path() + "/hung-DEL")) << "no hang: proves nothing";
  }
  // A second stop fails the same way while the plugin does.
  EXPECT_FALSE(cri_->stop_pod(id).ok());
  unmark(std::string(GetParam()) + "-DEL");
  ASSERT_OK(cri_->remove_pod(id));
  expect_nothing_left();
}

INSTANTIATE_TEST_SUITE_P(Plugin, CniDelFault, ::testing::Values("hang", "crash"),
                         [](const auto& info) { return std::string(info.param); });

// CHECK runs for each pod berthd recovers after a restart: a plugin that hangs there is reported
// in the pod's verbose status within the plugin timeout (the status answers meanwhile), and the
// pod is still READY (CHECK is a report, not a verdict).
TEST_F(CniFaults, ACheckThatHangsIsReportedAndTheStatusAnswers) {
  std::string id;
  ASSERT_OK(cri_->run_pod(pod("check-fault"), &id));
  mark("hang-CHECK");
  d_->stop(SIGKILL);
  ASSERT_TRUE(d_->start()) << d_->log();
  CriClient cri(*d_);
  cri.set_deadline(4s);  // far below the plugin timeout's reach if a status waited for CHECK
  std::string info;
  bool reported = false;
  for (int i = 0; i < 300 && !reported; ++i) {
    v1::PodSandboxStatusResponse resp;
    ASSERT_OK(cri.pod_status(id, &resp, true));
    EXPECT_EQ(resp.status().state(), v1::SANDBOX_READY);
    info = resp.info().at("info");
    reported = info.find(std::string("plugin ") + kPlugin + " (CHECK)") != std::string::npos;
    if (!reported) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(reported) << info;
  EXPECT_TRUE(fs::exists(plugins_->path() + "/hung-CHECK")) << "no hang: proves nothing";
  unmark("hang-CHECK");
  ASSERT_OK(cri.stop_pod(id));
  ASSERT_OK(cri.remove_pod(id));
  expect_nothing_left();
}

}  // namespace
}  // namespace berth::test
