// Crash consistency against a real berthd, runc, CNI bridge + portmap and a local registry.
// berthd is killed at every named fault point of posix/include/berth/fault_point.h (the whole
// list, not a sample) and at random instants under concurrent load; a new berthd on the same
// dirs is then used as kubelet would (list, stop, remove everything), and the host must hold
// nothing of it afterwards: the census of host_leftovers.h, and no `runc init` more than before.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <random>
#include <thread>

#include "berth/fault_point.h"
#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

struct FaultCase {
  std::string point, rpc;
};

// None in a build without fault points (the shipped one, scripts/test's first stage): berthd has
// none to arm, and a hundred tests that set up a pod's fixture only to skip cost that stage minutes.
// Those of a checkpoint and a restore need CRIU: checkpoint_crash_test.cc has them.
std::vector<FaultCase> every_fault_point() {
  std::vector<FaultCase> out;
#ifdef BERTH_FAULT_POINTS
#define BERTH_TEST_FAULT_CASE(name, rpc)                                            \
  if (std::string(rpc) != "CheckpointContainer" && std::string(rpc) != "Restore") { \
    out.push_back({#name, rpc});                                                    \
  }
  BERTH_FAULT_POINTS_LIST(BERTH_TEST_FAULT_CASE)
#undef BERTH_TEST_FAULT_CASE
#endif
  return out;
}

// Of this test process alone: crash tests run in parallel with each other and with other tests,
// and each census must see only its own pods.
const std::string kCgroupParent = "/berth-crash-test-" + std::to_string(::getpid());
// A container that ends on SIGTERM, so StopContainer's signal step is reached with a live process.
constexpr const char* kServe = "trap 'exit 0' TERM; while :; do sleep 0.1; done";

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

class Crash : public PodFixture {
 protected:
  void SetUp() override {
    PodFixture::SetUp();
    net_ = std::make_shared<TestNetwork>();
    TempDir& dirs = scratch();
    dir_ = dirs.path();
    root_ = dirs / "root";
    state_ = dirs / "state";
    runc_init_before_ = runc_init_processes(state_);
  }
  void TearDown() override {
    PodFixture::TearDown();
    release_host_leftovers(scope(false));
  }

  LeftoverScope scope(bool images_removed) const { return {root_, state_, kCgroupParent, net_.get(), images_removed}; }

  // A berthd on the test's dirs, with `fault` armed when given.
  DaemonProcess& berthd(const std::string& fault = "", bool wait_ready = true) {
    DaemonOptions o{.wait_ready = wait_ready, .network = net_};
    if (!fault.empty()) o.env = {"BERTH_FAULT_POINT=" + fault};
    return daemon_at(o, dir_ + "/berth-" + std::to_string(++started_) + ".sock", root_, state_);
  }

  v1::PodSandboxConfig pod(const std::string& name) {
    v1::PodSandboxConfig c = test_pod(name);
    c.set_log_directory(logs_->path());
    c.mutable_linux()->set_cgroup_parent(kCgroupParent);
    auto* port = c.add_port_mappings();  // so portmap makes rules that must go again
    port->set_container_port(8080);
    port->set_host_port(free_loopback_port());
    if (userns_) set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options());
    return c;
  }
  // A container of pod_life; in a userns pod it joins the pod's user namespace and has an
  // id-mapped volume, so its bundle holds an id-mapped copy too.
  v1::ContainerConfig life_container(const std::string& name) {
    v1::ContainerConfig c = shell_container(name, kServe);
    if (!userns_) return c;
    set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options());
    auto* m = c.add_mounts();
    m->set_host_path(volume_->path());
    m->set_container_path("/vol");
    for (auto* ids : {m->mutable_uidmappings(), m->mutable_gidmappings()}) *ids->Add() = kUsernsIds;
    return c;
  }
  static void set_userns(v1::NamespaceOption* ns) {
    auto* u = ns->mutable_userns_options();
    u->set_mode(v1::POD);
    *u->add_uids() = kUsernsIds;
    *u->add_gids() = kUsernsIds;
  }
  // Pods with their own user namespace from here on (the pod's root must get through the dirs).
  void use_user_namespaces() {
    userns_ = true;
    volume_ = std::make_unique<TempDir>("berth-crash-vol");
    ASSERT_EQ(::chmod(dir_.c_str(), 0711), 0);
  }
  static inline const v1::IDMapping kUsernsIds = [] {
    v1::IDMapping m;
    m.set_container_id(0);
    m.set_host_id(65536u * 310);
    m.set_length(65536);
    return m;
  }();

  // kubelet's life of one pod, call after call, up to the first that fails (where the armed point
  // killed berthd); returns that call's name, or "" when every call succeeded.
  std::string pod_life(CriClient& cri) {
    if (!cri.pull_image(image()).ok()) return "PullImage";
    v1::PodSandboxConfig config = pod("life");
    std::string pod_id, first, second;
    if (!cri.run_pod(config, &pod_id).ok()) return "RunPodSandbox";
    if (!cri.create_container(pod_id, life_container("first"), &first, config).ok()) return "CreateContainer";
    if (!cri.start_container(first).ok()) return "StartContainer";
    // A second one stays running into StopPodSandbox and RemovePodSandbox.
    if (!cri.create_container(pod_id, life_container("second"), &second, config).ok()) return "CreateContainer";
    if (!cri.start_container(second).ok()) return "StartContainer";
    if (!cri.stop_container(first, 10).ok()) return "StopContainer";
    if (!cri.remove_container(first).ok()) return "RemoveContainer";
    if (!cri.stop_pod(pod_id).ok()) return "StopPodSandbox";
    if (!cri.remove_pod(pod_id).ok()) return "RemovePodSandbox";
    return "";
  }

  static bool wait_for_log(DaemonProcess& d, const std::string& text, std::chrono::seconds timeout = 60s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (d.log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  // What kubelet does with what it finds: stop and remove every container and pod. Then every
  // image goes too, so that no blob or snapshot may be left either.
  void remove_everything(DaemonProcess& d, bool images) {
    CriClient cri(d);
    for (const auto& c : cri.list_containers()) {
      ASSERT_OK(cri.stop_container(c.id(), 0));
      ASSERT_OK(cri.remove_container(c.id()));
    }
    for (const auto& p : cri.list_pods()) {
      ASSERT_OK(cri.stop_pod(p.id()));
      ASSERT_OK(cri.remove_pod(p.id()));
    }
    EXPECT_TRUE(cri.list_pods().empty());
    EXPECT_TRUE(cri.list_containers().empty());
    if (images)
      for (const auto& i : cri.list_images()) ASSERT_OK(cri.remove_image(i.id()));
    ASSERT_TRUE(wait_for_log(d, "recovery: finished")) << d.log();
  }

  void expect_host_clean(bool images_removed) {
    auto left = host_leftovers(scope(images_removed));
    EXPECT_TRUE(left.empty()) << left.size() << " leftovers on the host:\n" << joined(left);
    EXPECT_EQ(runc_init_processes(state_), runc_init_before_) << "runc init processes left behind";
  }

  // The daemon died at `point`, by the SIGKILL the fault point sends.
  static void expect_died_at(DaemonProcess& d, const std::string& point) {
    EXPECT_EQ(d.wait_exit(30s), 128 + SIGKILL) << d.log();
    EXPECT_NE(d.log().find("fault point " + point + " reached"), std::string::npos) << d.log();
  }

  std::shared_ptr<TestNetwork> net_;
  bool userns_ = false;
  std::unique_ptr<TempDir> volume_;
  std::string dir_, root_, state_;
  int started_ = 0;
  int runc_init_before_ = 0;
};

// The census finds every kind of thing a live pod holds: the crash tests' "nothing left" can fail.
TEST_F(Crash, CensusSeesEveryKindOfResourceALivePodHolds) {
  DaemonProcess& d = berthd();
  CriClient cri(d);
  ASSERT_OK(cri.pull_image(image()));
  v1::PodSandboxConfig config = pod("census");
  std::string pod_id, id;
  ASSERT_OK(cri.run_pod(config, &pod_id));
  ASSERT_OK(cri.create_container(pod_id, shell_container("c", kServe), &id, config));
  ASSERT_OK(cri.start_container(id));
  auto left = host_leftovers(scope(true));
  for (const char* kind : {"mount", "cgroup", "process", "runtime container", "host-local address", "veth", "nat rule",
                           "netns pin", "sandbox bundle", "container bundle", "monitor socket", "sandbox checkpoint",
                           "container record", "writable layer", "CNI cache entry", "blob", "snapshot"}) {
    EXPECT_TRUE(std::any_of(left.begin(), left.end(),
                            [&](const std::string& l) { return l.rfind(std::string(kind) + ": ", 0) == 0; }))
        << "no " << kind << " among:\n"
        << joined(left);
  }
  remove_everything(d, true);
  expect_host_clean(true);
}

// A cgroup named like a berth object under a parent berth's pods use, owned by nothing berth knows
// (no checkpoint, bundle or runtime state names it) and holding a process: the restart's sweep
// kills the process and removes the cgroup in every hierarchy.
TEST_F(Crash, UnknownCgroupUnderABerthParentIsSweptAtStart) {
  DaemonProcess& first = berthd();
  CriClient cri(first);
  std::string pod_id;
  ASSERT_OK(cri.run_pod(pod("keeper"), &pod_id));
  const std::string stray = kCgroupParent + "/" + std::string(64, 'e');
  pid_t sleeper = ::fork();
  if (sleeper == 0) {
    ::execl("/bin/sleep", "sleep", "1000", nullptr);
    ::_exit(127);
  }
  // The stray cgroup in every hierarchy berth uses: on cgroup v2 the one below the root (whose
  // other entries are cgroups, not hierarchies: moving the sleeper into one of them would take it
  // out of the stray), on v1 each controller's.
  std::vector<std::string> hierarchies;
  if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
    hierarchies.push_back("/sys/fs/cgroup");
  } else {
    for (const auto& h : fs::directory_iterator("/sys/fs/cgroup"))
      if (fs::exists(h.path().string() + "/cgroup.procs") || fs::exists(h.path().string() + kCgroupParent))
        hierarchies.push_back(h.path().string());
  }
  std::vector<std::string> made;
  for (const auto& h : hierarchies) {
    std::string dir = h + stray;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) continue;
    write_file(dir + "/cgroup.procs", std::to_string(sleeper));
    made.push_back(dir);
  }
  ASSERT_FALSE(made.empty());
  first.stop(SIGKILL);
  DaemonProcess& second = berthd();
  ASSERT_TRUE(wait_for_log(second, "recovery: finished")) << second.log();
  EXPECT_NE(second.log().find("removed leftover cgroup " + stray), std::string::npos) << second.log();
  for (const auto& dir : made) EXPECT_FALSE(fs::exists(dir)) << dir;
  // The sweep killed the sleeper; a sleeper it missed fails the test instead of hanging it.
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 500 && reaped == 0; ++i) {
    reaped = ::waitpid(sleeper, &status, WNOHANG);
    if (reaped == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (reaped == 0) {
    ::kill(sleeper, SIGKILL);
    ::waitpid(sleeper, nullptr, 0);
  }
  ASSERT_EQ(reaped, sleeper) << "the stray cgroup's process outlived the sweep";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  CriClient again(second);
  ASSERT_EQ(again.list_pods().size(), 1u);  // the known pod is left alone
  EXPECT_EQ(again.list_pods()[0].state(), v1::SANDBOX_READY);
  remove_everything(second, true);
  expect_host_clean(true);
}

// Stop and remove of a pod race CreateContainer and StartContainer into it, and each other, while
// kubelet's status, list and stats calls read the pod and its containers: every call ends
// cleanly (removal is idempotent), and no container outlives its pod.
TEST_F(Crash, StopAndRemoveRacingCreateNeverLeaveAContainerInAGonePod) {
  DaemonProcess& d = berthd();
  CriClient cri(d);
  ASSERT_OK(cri.pull_image(image()));
  v1::PodSandboxConfig config = pod("racy");
  std::string pod_id;
  ASSERT_OK(cri.run_pod(config, &pod_id));
  std::atomic<int> created{0}, refused{0};
  std::vector<std::future<void>> calls;
  for (int w = 0; w < 4; ++w)
    calls.push_back(std::async(std::launch::async, [&, w] {
      for (int i = 0; i < 50; ++i) {
        std::string id;
        grpc::Status s = cri.create_container(
            pod_id, shell_container("c" + std::to_string(w) + "-" + std::to_string(i), kServe), &id, config);
        if (!s.ok()) {
          // Refused as the pod is going, or gone: never anything else.
          EXPECT_TRUE(s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
                      s.error_code() == grpc::StatusCode::NOT_FOUND)
              << s.error_code() << " " << s.error_message();
          ++refused;
          return;
        }
        ++created;
        (void)cri.start_container(id);
      }
    }));
  std::atomic<bool> done{false};
  auto reader = std::async(std::launch::async, [&] {
    while (!done) {
      v1::PodSandboxStatusResponse ps;
      (void)cri.pod_status(pod_id, &ps, true);
      for (const auto& c : cri.list_containers()) {
        v1::ContainerStatusResponse cs;
        (void)cri.container_status(c.id(), &cs, true);
      }
      (void)cri.list_pods();
      grpc::ClientContext ctx1, ctx2;
      v1::ListContainerStatsResponse lcs;
      (void)cri.runtime().ListContainerStats(&ctx1, v1::ListContainerStatsRequest(), &lcs);
      v1::ListPodSandboxStatsResponse lps;
      (void)cri.runtime().ListPodSandboxStats(&ctx2, v1::ListPodSandboxStatsRequest(), &lps);
    }
  });
  std::this_thread::sleep_for(300ms);
  for (int r = 0; r < 3; ++r) {
    calls.push_back(std::async(std::launch::async, [&] { EXPECT_TRUE(cri.stop_pod(pod_id).ok()); }));
    calls.push_back(std::async(std::launch::async, [&] { EXPECT_TRUE(cri.remove_pod(pod_id).ok()); }));
  }
  for (auto& c : calls) c.get();
  done = true;
  reader.get();
  EXPECT_GT(created.load(), 0);
  EXPECT_EQ(refused.load(), 4);
  EXPECT_TRUE(cri.list_pods().empty());
  EXPECT_TRUE(cri.list_containers().empty());
  remove_everything(d, true);
  EXPECT_EQ(d.stop(), 0);
  expect_host_clean(true);
}

// A running container whose record is gone (deleted by hand; berth's own order writes the record
// before the monitor starts): at the restart its monitor and container are killed and its runtime
// state, rootfs mount, bundle and writable layer removed; its pod stays and works.
TEST_F(Crash, ContainerWhoseRecordIsGoneIsStoppedAndRemovedAtStart) {
  DaemonProcess& first = berthd();
  CriClient cri(first);
  ASSERT_OK(cri.pull_image(image()));
  v1::PodSandboxConfig config = pod("recordless");
  std::string pod_id, id;
  ASSERT_OK(cri.run_pod(config, &pod_id));
  ASSERT_OK(cri.create_container(pod_id, shell_container("lost", kServe), &id, config));
  ASSERT_OK(cri.start_container(id));
  first.stop(SIGKILL);
  ASSERT_TRUE(fs::remove(root_ + "/container-records/" + id + ".json"));
  DaemonProcess& second = berthd();
  ASSERT_TRUE(wait_for_log(second, "recovery: finished")) << second.log();
  CriClient again(second);
  EXPECT_TRUE(again.list_containers().empty());
  EXPECT_NE(second.log().find("of leftover socket"), std::string::npos) << second.log();
  EXPECT_FALSE(fs::exists(state_ + "/containers/" + id));
  EXPECT_FALSE(fs::exists(root_ + "/containers/" + id));
  EXPECT_FALSE(fs::exists(state_ + "/runtime/runc/" + id));
  for (const auto& l : host_leftovers(scope(false))) EXPECT_EQ(l.find(id), std::string::npos) << l;
  ASSERT_EQ(again.list_pods().size(), 1u);
  std::string next;
  ASSERT_OK(again.create_container(pod_id, shell_container("next", kServe), &next, config));
  ASSERT_OK(again.start_container(next));
  remove_everything(second, true);
  expect_host_clean(true);
}

class CrashAtFaultPoint : public Crash, public ::testing::WithParamInterface<FaultCase> {};

TEST_P(CrashAtFaultPoint, RecoveryAndKubeletsCleanupLeaveNothing) {
  const FaultCase& f = GetParam();
  if (f.point == "recovery_undoing_sandbox") {
    // A RunPodSandbox cut short leaves a "creating" sandbox; the next berthd dies while undoing it.
    DaemonProcess& first = berthd("run_pod_sandbox_runtime_created");
    CriClient cri(first);
    EXPECT_EQ(pod_life(cri), "RunPodSandbox");
    expect_died_at(first, "run_pod_sandbox_runtime_created");
    expect_died_at(berthd(f.point, false), f.point);
  } else if (f.point == "recovery_removing_container") {
    // A container whose pod's checkpoint is gone (deleted by hand): the pod's netns, bundle,
    // pause and network are leftovers of no sandbox; the next berthd dies removing the container.
    DaemonProcess& first = berthd();
    CriClient cri(first);
    ASSERT_OK(cri.pull_image(image()));
    v1::PodSandboxConfig config = pod("orphaned");
    std::string pod_id, id;
    ASSERT_OK(cri.run_pod(config, &pod_id));
    ASSERT_OK(cri.create_container(pod_id, shell_container("orphan", kServe), &id, config));
    ASSERT_OK(cri.start_container(id));
    first.stop(SIGKILL);
    ASSERT_TRUE(fs::remove(root_ + "/sandboxes/" + pod_id + ".json"));
    expect_died_at(berthd(f.point, false), f.point);
  } else {
    DaemonProcess& first = berthd(f.point);
    CriClient cri(first);
    EXPECT_EQ(pod_life(cri), f.rpc) << first.log();
    expect_died_at(first, f.point);
  }
  DaemonProcess& last = berthd();
  if (f.point == "atomic_write_temp_written") {  // the temp file of the cut write was found and removed
    EXPECT_NE(last.log().find("write cut short"), std::string::npos) << last.log();
  }
  remove_everything(last, true);
  EXPECT_EQ(last.stop(), 0);
  expect_host_clean(true);
}

INSTANTIATE_TEST_SUITE_P(Every, CrashAtFaultPoint, ::testing::ValuesIn(every_fault_point()),
                         [](const ::testing::TestParamInfo<FaultCase>& info) { return info.param.point; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CrashAtFaultPoint);  // without fault points

// The same life of a pod with its own user namespace (its pin, id-mapped layers and an id-mapped
// volume), cut at every fault point of the rpcs it makes after the pull.
class CrashAtFaultPointWithAUserNamespace : public CrashAtFaultPoint {};

TEST_P(CrashAtFaultPointWithAUserNamespace, RecoveryAndKubeletsCleanupLeaveNothing) {
  const FaultCase& f = GetParam();
  use_user_namespaces();
  DaemonProcess& first = berthd(f.point);
  CriClient cri(first);
  EXPECT_EQ(pod_life(cri), f.rpc) << first.log();
  expect_died_at(first, f.point);
  if (f.rpc.find("Container") != std::string::npos) {  // the pod is up, holding its own user namespace
    EXPECT_FALSE(fs::is_empty(state_ + "/userns"));
  }
  DaemonProcess& last = berthd();
  remove_everything(last, true);
  EXPECT_EQ(last.stop(), 0);
  expect_host_clean(true);  // its census has every mount under berthd's dirs, id-mapped copies among them
}

std::vector<FaultCase> fault_points_after_the_pull() {
  std::vector<FaultCase> out;
  for (const FaultCase& f : every_fault_point())
    if (f.rpc != "PullImage" && f.rpc != "Recovery") out.push_back(f);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Every, CrashAtFaultPointWithAUserNamespace, ::testing::ValuesIn(fault_points_after_the_pull()),
                         [](const ::testing::TestParamInfo<FaultCase>& info) { return info.param.point; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CrashAtFaultPointWithAUserNamespace);

// Pod workers at once (RunPodSandbox, CreateContainer, StartContainer), berthd SIGKILLed at a
// random instant of their work, restarted, everything removed: nothing may be left, round after
// round. The seed is printed, so a failing round can be replayed.
TEST_F(Crash, KilledAtRandomInstantsUnderLoadLeavesNothing) {
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  DaemonProcess* d = &berthd();
  {
    CriClient cri(*d);
    ASSERT_OK(cri.pull_image(image()));
  }
  constexpr int kWorkers = 8, kRounds = 4;
  for (int round = 0; round < kRounds; ++round) {
    int delay_ms = std::uniform_int_distribution<int>(30, 600)(rng);
    SCOPED_TRACE("round " + std::to_string(round) + ", SIGKILL after " + std::to_string(delay_ms) + " ms");
    CriClient cri(*d);
    std::vector<std::future<void>> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.push_back(std::async(std::launch::async, [&, w] {
        v1::PodSandboxConfig config = pod("load-" + std::to_string(round) + "-" + std::to_string(w));
        std::string pod_id, id;
        if (!cri.run_pod(config, &pod_id).ok()) return;
        if (!cri.create_container(pod_id, shell_container("c", kServe), &id, config).ok()) return;
        (void)cri.start_container(id);
      }));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    d->stop(SIGKILL);
    for (auto& w : workers) w.get();
    d = &berthd();
    remove_everything(*d, false);
    expect_host_clean(false);
  }
  remove_everything(*d, true);
  EXPECT_EQ(d->stop(), 0);
  expect_host_clean(true);
}

}  // namespace
}  // namespace berth::test
