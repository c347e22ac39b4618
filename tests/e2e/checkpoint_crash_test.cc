// berthd killed at every fault point of a checkpoint (CheckpointContainer) and of a restore (the
// CreateContainer of an archive, and the StartContainer that restores it), then started again:
// the container runs on, unfrozen, no archive or temp archive is at the location's side, the work
// and import dirs are gone, a restore cut before its record leaves no container, one cut after it
// starts (or is adopted) restored, and when everything is removed the host holds nothing of it.
// CRIU works only in the guest of tests/vm, and the points only in a build with them (scripts/test
// runs this from build-asan in its cgroup v2 stage): elsewhere it skips, saying why.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>

#include "berth/fault_point.h"
#include "berth/test/cri_client.h"
#include "berth/test/eventually.h"
#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

// Of this test process alone, as the crash tests' parent is.
const std::string kParent = "/berth-checkpoint-crash-" + std::to_string(::getpid());

std::vector<std::string> points_of([[maybe_unused]] const std::string& rpc) {
  std::vector<std::string> out;
#ifdef BERTH_FAULT_POINTS
#define BERTH_TEST_POINT_OF(name, call) \
  if (rpc == call) {                    \
    out.push_back(#name);               \
  }
  BERTH_FAULT_POINTS_LIST(BERTH_TEST_POINT_OF)
#undef BERTH_TEST_POINT_OF
#endif
  return out;
}

class CheckpointCrash : public PodFixture {
 protected:
  void SetUp() override {
    PodFixture::SetUp();
    net_ = std::make_shared<TestNetwork>();
    dir_ = scratch().path();
    out_ = std::make_unique<TempDir>("berth-checkpoint-crash-out");
  }
  void TearDown() override {
    PodFixture::TearDown();
    release_host_leftovers(scope(false));
  }
  LeftoverScope scope(bool images_removed) const {
    return {dir_ + "/root", dir_ + "/state", kParent, net_.get(), images_removed};
  }
  // berthd on the test's dirs (the fixture's client follows it), with `fault` armed when given.
  DaemonProcess& berthd(const std::string& fault = "") {
    DaemonOptions o{.network = net_};
    if (!fault.empty()) o.env = {"BERTH_FAULT_POINT=" + fault};
    d_ = &daemon_at(o, dir_ + "/berth-" + std::to_string(++started_) + ".sock", dir_ + "/root", dir_ + "/state");
    cri_ = std::make_unique<CriClient>(*d_);
    return *d_;
  }
  static void expect_died_at(DaemonProcess& d, const std::string& point) {
    EXPECT_EQ(d.wait_exit(std::chrono::seconds(60)), 128 + SIGKILL) << d.log();
    EXPECT_NE(d.log().find("fault point " + point + " reached"), std::string::npos) << d.log();
  }
  // The probe's answer: empty where CRIU works, else why not.
  std::string criu_unusable() {
    nlohmann::json info;
    eventually(
        [&] {
          grpc::ClientContext ctx;
          v1::StatusRequest req;
          req.set_verbose(true);
          v1::StatusResponse resp;
          if (!cri_->runtime().Status(&ctx, req, &resp).ok()) return false;
          auto it = resp.info().find("checkpointRestore");
          if (it == resp.info().end()) return true;
          info = nlohmann::json::parse(it->second);
          return info.value("reason", "").find("still running") == std::string::npos;
        },
        std::chrono::seconds(120));
    return info.value("supported", false) ? "" : info.value("reason", "no checkpointRestore in Status");
  }
  grpc::Status checkpoint(const std::string& id, const std::string& location) {
    grpc::ClientContext ctx;
    v1::CheckpointContainerRequest req;
    req.set_container_id(id);
    req.set_location(location);
    req.set_timeout(600);
    v1::CheckpointContainerResponse resp;
    return cri_->runtime().CheckpointContainer(&ctx, req, &resp);
  }
  // The container counts on: its log grows by two more counts.
  void expect_counting(const std::string& name) {
    const size_t now = numbers(log_of(name)).size();
    EXPECT_TRUE(eventually([&] { return numbers(log_of(name)).size() >= now + 2; }, std::chrono::seconds(60)))
        << name << " does not count:\n"
        << log_of(name);
  }
  std::string id_of(const std::string& name) {
    for (const auto& c : cri_->list_containers())
      if (c.metadata().name() == name) return c.id();
    return "";
  }
  void expect_no_work_left() {
    EXPECT_TRUE(dir_entries(dir_ + "/root/checkpoints").empty());
    EXPECT_TRUE(dir_entries(dir_ + "/root/restores").empty());
    EXPECT_EQ(dir_entries(out_->path()), std::vector<std::string>{"counter.tar"});
  }

  std::shared_ptr<TestNetwork> net_;
  std::string dir_;
  std::unique_ptr<TempDir> out_;
  int started_ = 0;
};

TEST_F(CheckpointCrash, EveryStepOfACheckpointAndARestoreIsFinishedOrUndoneAtTheNextStart) {
  const auto checkpoint_points = points_of("CheckpointContainer"), restore_points = points_of("Restore");
  if (checkpoint_points.empty()) GTEST_SKIP() << "berthd is built without fault points (-DBERTH_FAULT_POINTS=OFF)";
  berthd();
  if (std::string why = criu_unusable(); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(cri_->pull_image(image()).ok());
  pod_config_ = test_pod("checkpointed");
  pod_config_.set_log_directory(logs_->path());
  pod_config_.mutable_linux()->set_cgroup_parent(kParent);
  ASSERT_TRUE(cri_->run_pod(pod_config_, &pod_).ok());
  const std::string id = run(shell_container("counter", "i=0; while :; do i=$((i+1)); echo $i; sleep 0.2; done"));
  ASSERT_TRUE(eventually([&] { return numbers(log_of("counter")).size() >= 3; }, std::chrono::seconds(60)));
  // The archive the restores use, made before any point is armed.
  const std::string archive = out_->path() + "/counter.tar";
  const long before = numbers(log_of("counter")).back();
  grpc::Status s = checkpoint(id, archive);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // Where the count stood in it: a restored container's log starts with these lines.
  const std::vector<long> archived = numbers(shell("tar xOf '" + archive + "' container.log 2>/dev/null"));
  ASSERT_FALSE(archived.empty());

  for (const std::string& point : checkpoint_points) {
    SCOPED_TRACE(point);
    d_->stop();
    DaemonProcess& armed = berthd(point);
    EXPECT_FALSE(checkpoint(id, out_->path() + "/cut.tar").ok());
    expect_died_at(armed, point);
    berthd();
    EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
    expect_counting("counter");  // not left frozen
    expect_no_work_left();       // nor a temp archive, nor cut.tar
  }

  // Cut before its record, a restore leaves no container; cut after it, the container is there
  // CREATED and starts restored. Cut in its start after the runtime restored it, it is adopted.
  std::vector<std::string> cuts = restore_points;
  cuts.push_back("create_container_record_written");
  cuts.push_back("start_container_runtime_started");
  int n = 0;
  for (const std::string& point : cuts) {
    SCOPED_TRACE(point);
    const std::string name = "restored-" + std::to_string(++n);
    d_->stop();
    DaemonProcess& armed = berthd(point);
    std::string restored;
    s = cri_->create_container(pod_, test_container(name, archive, {}), &restored, pod_config_);
    if (s.ok()) {
      EXPECT_FALSE(cri_->start_container(restored).ok());  // cut in its start
    }
    expect_died_at(armed, point);
    DaemonProcess& next = berthd();
    if (point != "start_container_runtime_started" && point != "create_container_record_written") {
      EXPECT_EQ(id_of(name), "") << "a restore cut before its record left a container";
      EXPECT_EQ(dir_entries(dir_ + "/root/containers"), std::vector<std::string>{id}) << "its writable layer stays";
      expect_no_work_left();
      continue;
    }
    restored = id_of(name);
    ASSERT_FALSE(restored.empty()) << next.log();
    if (point == "create_container_record_written") {
      EXPECT_EQ(status(restored).state(), v1::CONTAINER_CREATED);
      s = cri_->start_container(restored);
      ASSERT_TRUE(s.ok()) << s.error_message();
    } else {
      EXPECT_EQ(status(restored).state(), v1::CONTAINER_RUNNING) << next.log();
    }
    EXPECT_FALSE(fs::exists(dir_ + "/root/containers/" + restored + "/checkpoint"))
        << "the restore's images outlive it";
    // The count goes on, after the archived lines, from where the dump took it: past the count
    // when the checkpoint was asked for, never from 1, and not past the archived log's last
    // count (the log is copied just after the dump, while the container runs on).
    expect_counting(name);
    auto after = numbers(log_of(name));
    ASSERT_GT(after.size(), archived.size()) << log_of(name);
    EXPECT_GT(after[archived.size()], before) << log_of(name);
    EXPECT_LE(after[archived.size()], archived.back() + 1) << log_of(name);
    ASSERT_TRUE(cri_->stop_container(restored, 0).ok());
    ASSERT_TRUE(cri_->remove_container(restored).ok());
    expect_no_work_left();
  }

  // Everything goes, as kubelet would remove it: nothing of it stays on the host.
  for (const auto& c : cri_->list_containers()) {
    ASSERT_TRUE(cri_->stop_container(c.id(), 0).ok());
    ASSERT_TRUE(cri_->remove_container(c.id()).ok());
  }
  ASSERT_TRUE(cri_->stop_pod(pod_).ok());
  ASSERT_TRUE(cri_->remove_pod(pod_).ok());
  for (const auto& i : cri_->list_images()) ASSERT_TRUE(cri_->remove_image(i.id()).ok());
  EXPECT_EQ(d_->stop(), 0);
  auto left = host_leftovers(scope(true));
  std::string listed;
  for (const auto& l : left) listed += "  " + l + "\n";
  EXPECT_TRUE(left.empty()) << left.size() << " leftovers on the host:\n" << listed;
}

}  // namespace
}  // namespace berth::test
