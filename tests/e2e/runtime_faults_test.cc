// A runtime that fails from outside, made for real: the handler's binary is a wrapper around runc
// that, when a marker file of the test's says so, hangs (sleeps for good) in one command for one
// container, or kills itself right after runc's create succeeded (a crash mid-create). The
// handler's timeout is a few seconds; every rpc answers within kubelet's deadline, status and list
// calls answer meanwhile (no lock held across the hang), and the host's census finds nothing of
// the container afterwards.
#include <sys/stat.h>

#include <filesystem>
#include <future>

#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

const std::string kRuntimeFaultsCgroupParent = "/berth-runtime-faults-" + std::to_string(::getpid());

#define EXPECT_OK_CALL(call)                                               \
  do {                                                                     \
    grpc::Status status_ = (call);                                         \
    EXPECT_TRUE(status_.ok()) << #call << ": " << status_.error_message(); \
  } while (0)

class RuntimeFaults : public PodFixture {
 protected:
  void SetUp() override {
    PodFixture::SetUp();
    markers_ = std::make_unique<TempDir>("berth-faulty-runtime");
    const std::string dir = markers_->path();
    // `hang-<command>-<arg>`: that command, when one of its arguments is <arg>, sleeps for good.
    // `crash-create`: runc's create (or run: berth-monitor creates and starts in one) runs, then
    // the wrapper dies of SIGKILL before it answers.
    // It does not say it is runc (berthd would delete an exited container itself, as runc does),
    // so the runtime's own delete runs at the exit, as with any other runtime.
    write_file(dir + "/runc-faulty",
               "#!/bin/sh\n"
               "[ \"$1\" = --version ] && { echo 'faulty version 1 (a runc wrapper)'; exit 0; }\n"
               "cmd=; for a; do case \"$a\" in create|run|delete|kill|start|state) [ -z \"$cmd\" ] && cmd=$a;; esac; "
               "done\n"
               "for a; do if [ -e \"" +
                   dir + "/hang-$cmd-$a\" ]; then : > \"" + dir + "/hung-$cmd-$a\"; exec " + hang_command() +
                   "; fi; done\n"
                   "if { [ \"$cmd\" = create ] || [ \"$cmd\" = run ]; } && [ -e \"" +
                   dir +
                   "/crash-create\" ]; then runc \"$@\"; kill -9 $$; fi\n"
                   "exec runc \"$@\"\n",
               0755);
    // No pod of the fixture's: the census at the end is of the faulty pod alone.
    d_ = &daemon({.config_toml = "[runtimes.runc]\npath = \"runc\"\n[runtimes.faulty]\npath = \"" + dir +
                                 "/runc-faulty\"\ntimeout_seconds = 6\nhost_processes = true\n"});
    cri_ = std::make_unique<CriClient>(*d_);
    // kubelet's own deadline on its calls (runtimeRequestTimeout, 2 min), shorter: far above the
    // handler's timeout, so a call that waited for the hang more than a few times fails.
    cri_->set_deadline(40s);
    ASSERT_OK(cri_->pull_image(image()));
  }
  void TearDown() override {
    // A hung command the test did not wait out: its sleep goes with the markers.
    shell("pkill -f '^" + hang_command() + "$' 2>/dev/null");
    PodFixture::TearDown();
    if (d_) release_host_leftovers(scope());
  }
  // This test's own (tests run side by side, and their containers sleep too).
  static std::string hang_command() { return "sleep 99999." + std::to_string(::getpid()); }
  LeftoverScope scope() const { return {d_->root(), d_->state(), kRuntimeFaultsCgroupParent, d_->network()}; }
  void mark(const std::string& name) { write_file(markers_->path() + "/" + name, ""); }
  bool wait_marked(const std::string& name) {
    for (int i = 0; i < 1000; ++i) {
      if (fs::exists(markers_->path() + "/" + name)) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  // A pod of the faulty handler with one running container.
  std::string faulty_container(std::string* pod_id) {
    auto config = test_pod("faulty");
    config.set_log_directory(logs_->path());
    config.mutable_linux()->set_cgroup_parent(kRuntimeFaultsCgroupParent);
    EXPECT_OK_CALL(cri_->run_pod(config, pod_id, "faulty"));
    std::string id;
    EXPECT_OK_CALL(cri_->create_container(*pod_id, shell_container("sleeper", "sleep 100000"), &id, config));
    return id;
  }
  // Calls that must not wait for the hung command: each within a few seconds.
  void expect_answers_meanwhile(const std::string& pod_id, const std::string& id) {
    CriClient quick(*d_);
    quick.set_deadline(4s);
    v1::ContainerStatusResponse container;
    EXPECT_OK_CALL(quick.container_status(id, &container));
    EXPECT_FALSE(quick.list_containers().empty());
    v1::PodSandboxStatusResponse pod;
    EXPECT_OK_CALL(quick.pod_status(pod_id, &pod));
  }
  void expect_nothing_left(const std::string& pod_id, const std::string& id) {
    EXPECT_FALSE(fs::exists(d_->state() + "/runtime/faulty/" + id));
    EXPECT_OK_CALL(cri_->stop_pod(pod_id));
    EXPECT_OK_CALL(cri_->remove_pod(pod_id));
    EXPECT_EQ(host_leftovers(scope()), std::vector<std::string>{});
  }

  std::unique_ptr<TempDir> markers_;
};

TEST_F(RuntimeFaults, ARuntimeHungInKillAndDeleteHoldsUpNeitherStopNorRemoval) {
  std::string pod_id;
  std::string id = faulty_container(&pod_id);
  ASSERT_OK(cri_->start_container(id));
  mark("hang-kill-" + id);
  mark("hang-delete-" + id);
  ASSERT_OK(cri_->stop_container(id, 0));
  EXPECT_EQ(status(id).state(), v1::CONTAINER_EXITED);
  ASSERT_TRUE(wait_marked("hung-delete-" + id)) << "the runtime's delete at the exit did not begin";
  expect_answers_meanwhile(pod_id, id);
  ASSERT_OK(cri_->remove_container(id));
  EXPECT_NE(d_->log().find("hangs; removing its cgroup and state by hand"), std::string::npos) << d_->log();
  expect_nothing_left(pod_id, id);
}

// StopPodSandbox stops the pod's containers as StopContainer does, and its removal removes them:
// the hung kill and delete of one of them hold up neither, nor any other call meanwhile.
TEST_F(RuntimeFaults, ARuntimeHungInKillAndDeleteHoldsUpNeitherThePodsStopNorItsRemoval) {
  std::string pod_id;
  std::string id = faulty_container(&pod_id);
  ASSERT_OK(cri_->start_container(id));
  mark("hang-kill-" + id);
  mark("hang-delete-" + id);
  ASSERT_OK(cri_->stop_pod(pod_id));
  EXPECT_EQ(status(id).state(), v1::CONTAINER_EXITED);
  ASSERT_TRUE(wait_marked("hung-delete-" + id)) << "the runtime's delete at the exit did not begin";
  expect_answers_meanwhile(pod_id, id);
  ASSERT_OK(cri_->remove_pod(pod_id));
  EXPECT_TRUE(cri_->list_containers().empty());
  EXPECT_FALSE(fs::exists(d_->state() + "/runtime/faulty/" + id));
  EXPECT_EQ(host_leftovers(scope()), std::vector<std::string>{});
}

TEST_F(RuntimeFaults, ARuntimeHungInDeleteAtRemovalOfARunningContainer) {
  std::string pod_id;
  std::string id = faulty_container(&pod_id);
  ASSERT_OK(cri_->start_container(id));
  mark("hang-delete-" + id);
  // RemoveContainer of a running one (crictl rm -f; kubelet after a failed stop): kill, then the
  // delete, which hangs.
  auto removal = std::async(std::launch::async, [&] { return cri_->remove_container(id); });
  ASSERT_TRUE(wait_marked("hung-delete-" + id));
  expect_answers_meanwhile(pod_id, id);
  grpc::Status removed = removal.get();
  ASSERT_TRUE(removed.ok()) << removed.error_message();
  expect_nothing_left(pod_id, id);
}

TEST_F(RuntimeFaults, ARuntimeThatNeverReturnsFromCreateIsEndedAtTheHandlersTimeout) {
  std::string pod_id;
  std::string id = faulty_container(&pod_id);
  mark("hang-run-" + id);
  auto start = std::async(std::launch::async, [&] { return cri_->start_container(id); });
  ASSERT_TRUE(wait_marked("hung-run-" + id));
  expect_answers_meanwhile(pod_id, id);
  grpc::Status started = start.get();
  EXPECT_EQ(started.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << started.error_message();
  EXPECT_EQ(status(id).reason(), "StartError");
  ASSERT_OK(cri_->remove_container(id));
  expect_nothing_left(pod_id, id);
}

TEST_F(RuntimeFaults, ARuntimeThatCrashesMidCreateLeavesNothing) {
  std::string pod_id;
  std::string id = faulty_container(&pod_id);
  mark("crash-create");
  int inits_before = runc_init_processes(d_->state());
  grpc::Status started = cri_->start_container(id);
  EXPECT_FALSE(started.ok());
  auto st = status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.reason(), "StartError");
  EXPECT_EQ(runc_init_processes(d_->state()), inits_before);
  ASSERT_OK(cri_->remove_container(id));
  expect_nothing_left(pod_id, id);
}

}  // namespace
}  // namespace berth::test
