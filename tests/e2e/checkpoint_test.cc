// CheckpointContainer and restores from a checkpoint archive. Checkpoint.* run anywhere: requests
// refused for their fields, a node without CRIU (both rpcs say why, Status says so), what a
// checkpoint cut short leaves swept at start. CheckpointRestore.* need CRIU to work, which it does
// only in the guest of tests/vm (Debian's kernel; criu check fails on this machine's): a counting
// container checkpointed and restored into another pod, a timeout too short, two checkpoints at
// once, corrupt and hostile archives. They skip, saying why, where CRIU does not work.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <sstream>

#include "berth/test/cri_client.h"
#include "berth/test/eventually.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_cgroup.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

grpc::Status checkpoint_container(CriClient& cri, const std::string& id, const std::string& location,
                                  int64_t timeout = 0) {
  grpc::ClientContext ctx;
  v1::CheckpointContainerRequest req;
  req.set_container_id(id);
  req.set_location(location);
  req.set_timeout(timeout);
  v1::CheckpointContainerResponse resp;
  return cri.runtime().CheckpointContainer(&ctx, req, &resp);
}

nlohmann::json checkpoint_info(CriClient& cri) {
  grpc::ClientContext ctx;
  v1::StatusRequest req;
  req.set_verbose(true);
  v1::StatusResponse resp;
  grpc::Status s = cri.runtime().Status(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  auto it = resp.info().find("checkpointRestore");
  return it == resp.info().end() ? nlohmann::json() : nlohmann::json::parse(it->second);
}

// The probe runs on a thread of berthd's from its start: its answer, once it has one.
nlohmann::json settled_checkpoint_info(CriClient& cri) {
  nlohmann::json info;
  eventually(
      [&] {
        info = checkpoint_info(cri);
        return info.value("reason", "").find("still running") == std::string::npos;
      },
      std::chrono::seconds(120));
  return info;
}

// A command's stdout (arguments quoted for the shell).
std::string run_output(const std::vector<std::string>& argv) {
  std::string cmd;
  for (const auto& a : argv) {
    std::string q = "'";
    for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += q + "' ";
  }
  return shell(cmd + "2>/dev/null");
}

class Checkpoint : public PodFixture {};

TEST_F(Checkpoint, BadRequestsNameTheFieldAndLeaveNothing) {
  auto& cri = ready("pod");
  std::string id = run(shell_container("c", "sleep 1000"));
  TempDir out("berth-checkpoint-out");
  struct Case {
    std::string id, location, field;
    grpc::StatusCode code;
  } cases[] = {
      {"", out / "a.tar", "container_id", grpc::StatusCode::INVALID_ARGUMENT},
      {id, "", "location", grpc::StatusCode::INVALID_ARGUMENT},
      {id, "relative.tar", "location", grpc::StatusCode::INVALID_ARGUMENT},
      {id, out / "missing-dir/a.tar", "location", grpc::StatusCode::INVALID_ARGUMENT},
      {std::string(64, 'f'), out / "a.tar", "not found", grpc::StatusCode::NOT_FOUND},
  };
  for (const auto& c : cases) {
    auto s = checkpoint_container(cri, c.id, c.location);
    EXPECT_EQ(s.error_code(), c.code) << c.location << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.field), std::string::npos) << s.error_message();
  }
  grpc::ClientContext ctx;
  v1::CheckpointContainerRequest req;
  req.set_container_id(id);
  req.set_location(out / "a.tar");
  req.set_timeout(-1);
  v1::CheckpointContainerResponse resp;
  auto s = cri.runtime().CheckpointContainer(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("timeout"), std::string::npos) << s.error_message();
  // A file at the location is never overwritten.
  write_file(out / "taken.tar", "mine\n");
  s = checkpoint_container(cri, id, out / "taken.tar");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  EXPECT_EQ(read_file(out / "taken.tar"), "mine\n");
  EXPECT_EQ(dir_entries(out.path()), std::vector<std::string>{"taken.tar"});
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
}

TEST_F(Checkpoint, WithoutCriuBothRpcsSayWhyAndStatusSaysSo) {
  DaemonOptions o;
  o.config_toml = "criu_path = \"/nonexistent/criu\"\n";
  auto& cri = ready("pod", o);
  nlohmann::json info = settled_checkpoint_info(cri);
  EXPECT_EQ(info.value("supported", true), false) << info.dump();
  EXPECT_NE(info.value("reason", "").find("/nonexistent/criu"), std::string::npos) << info.dump();
  std::string id = run(shell_container("c", "sleep 1000"));
  TempDir out("berth-checkpoint-out");
  auto s = checkpoint_container(cri, id, out / "a.tar");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("not installed"), std::string::npos) << s.error_message();
  EXPECT_TRUE(dir_entries(out.path()).empty());
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
  // A restore is refused for the same reason, naming the image field.
  write_file(out / "archive.tar", "anything");
  std::string restored;
  s = cri.create_container(pod_, test_container("r", out / "archive.tar", {}), &restored, pod_config_);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("config.image.image"), std::string::npos) << s.error_message();
  EXPECT_TRUE(dir_entries(d_->root() + "/restores").empty());
}

TEST_F(Checkpoint, StatusSaysWhatCriuCheckSays) {
  if (::access("/usr/sbin/criu", X_OK) != 0) GTEST_SKIP() << "criu is not installed (scripts/install-deps does)";
  auto& cri = ready("pod");
  // What the node's criu says of this kernel, asked by the test itself.
  bool works = ::system("/usr/sbin/criu check > /dev/null 2>&1") == 0;
  nlohmann::json info = settled_checkpoint_info(cri);
  EXPECT_EQ(info.value("supported", !works), works) << info.dump();
  EXPECT_FALSE(info.value("criuVersion", "").empty()) << info.dump();
  if (!works) {
    EXPECT_NE(info.value("reason", "").find("criu check failed"), std::string::npos) << info.dump();
    std::string id = run(shell_container("c", "sleep 1000"));
    TempDir out("berth-checkpoint-out");
    auto s = checkpoint_container(cri, id, out / "a.tar");
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
    EXPECT_NE(s.error_message().find("criu check failed"), std::string::npos) << s.error_message();
  }
}

TEST_F(Checkpoint, WhatACheckpointCutShortLeftIsSweptAtStart) {
  // What a berthd killed mid-checkpoint leaves: a work dir, the marker naming its temp archive
  // beside the location, the temp archive; a restore's unpacked archive. A file the marker names
  // that berth would never have made stays.
  TempDir out("berth-checkpoint-out");
  DaemonProcess first;
  ASSERT_TRUE(first.start()) << first.log();
  first.stop();
  const std::string checkpoints = first.root() + "/checkpoints", restores = first.root() + "/restores";
  ::mkdir((checkpoints + "/abc").c_str(), 0700);
  write_file(checkpoints + "/abc/dump.log", "x");
  write_file(out / "a.tar.berth-checkpoint-123456", "half");
  write_file(checkpoints + "/abc.target", out / "a.tar.berth-checkpoint-123456");
  write_file(out / "users-file", "theirs");
  write_file(checkpoints + "/def.target", out / "users-file");
  ::mkdir((restores + "/xyz").c_str(), 0700);
  write_file(restores + "/xyz/config.dump", "{}");
  DaemonProcess second({}, first.socket(), first.root(), first.state());
  ASSERT_TRUE(second.start()) << second.log();
  EXPECT_TRUE(dir_entries(checkpoints).empty());
  EXPECT_TRUE(dir_entries(restores).empty());
  EXPECT_EQ(dir_entries(out.path()), std::vector<std::string>{"users-file"});
}

// A dump cut short with berthd (the runtime and CRIU die with it) can leave the container frozen
// in its cgroup: berthd's next start finds the cut checkpoint's work dir, sees the runtime call
// the container paused, and resumes it. The frozen state is made here with the runtime's own pause
// (CRIU's freeze is the same cgroup freezer), so this runs without CRIU.
TEST_F(Checkpoint, AContainerADumpCutShortLeftFrozenIsResumedAtStart) {
  TempDir& shared = scratch();
  auto net = std::make_shared<TestNetwork>();
  const std::string root = shared / "root", state = shared / "state";
  DaemonProcess& first = daemon_at({.network = net}, shared / "a.sock", root, state);
  cri_ = std::make_unique<CriClient>(first);
  ASSERT_TRUE(cri_->pull_image(image()).ok());
  pod_config_ = test_pod("frozen");
  pod_config_.set_log_directory(logs_->path());
  ASSERT_TRUE(cri_->run_pod(pod_config_, &pod_).ok());
  const std::string id = run(shell_container("ticker", "i=0; while :; do i=$((i+1)); echo $i; sleep 0.1; done"));
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/ticker.log", "3\n"));
  first.stop(SIGKILL);
  const std::string rt = test_runtime() + " --root " + state + "/runtime/" + test_runtime() + " ";
  ASSERT_EQ(shell(rt + "pause " + id + " >/dev/null 2>&1; echo $?"), "0\n");
  // Frozen: once the monitor has logged what was left in the pipe, the log stops growing.
  size_t frozen_at = 0;
  ASSERT_TRUE(eventually([&] {
    const size_t was = read_file(logs_->path() + "/ticker.log").size();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    frozen_at = read_file(logs_->path() + "/ticker.log").size();
    return frozen_at == was;
  })) << "the pause did not freeze it";
  // What the cut checkpoint left: its work dir, named after the container.
  ::mkdir((root + "/checkpoints/" + id.substr(0, 12) + "-0123456789ab").c_str(), 0700);
  DaemonProcess& second = daemon_at({.network = net}, shared / "b.sock", root, state);
  cri_ = std::make_unique<CriClient>(second);
  EXPECT_NE(second.log().find("container " + id + ": resumed, found frozen"), std::string::npos) << second.log();
  EXPECT_NE(shell(rt + "state " + id).find("\"running\""), std::string::npos);
  EXPECT_TRUE(eventually([&] { return read_file(logs_->path() + "/ticker.log").size() > frozen_at; }))
      << "it still does not count";
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
  EXPECT_TRUE(dir_entries(root + "/checkpoints").empty());
  ASSERT_TRUE(cri_->stop_pod(pod_).ok());
  ASSERT_TRUE(cri_->remove_pod(pod_).ok());
}

// A container frozen in its cgroup by someone else (the runtime's pause here; a dump cut short
// in a berthd that is not restarted yet) is still stopped: on cgroup v1 its SIGKILL is taken
// only once thawed, and StopContainer thaws it.
TEST_F(Checkpoint, AFrozenContainerIsStillStoppedAndItsPodRemoved) {
  auto& cri = ready("frozen-stop");
  const std::string id = run(shell_container("ticker", "i=0; while :; do i=$((i+1)); echo $i; sleep 0.1; done"));
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/ticker.log", "3\n"));
  const std::string rt = test_runtime() + " --root " + d_->state() + "/runtime/" + test_runtime() + " ";
  ASSERT_EQ(shell(rt + "pause " + id + " >/dev/null 2>&1; echo $?"), "0\n");
  auto s = cri.stop_container(id, 0);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto st = wait_exited(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 128 + SIGKILL) << st.reason();
  EXPECT_NE(d_->log().find("container " + id + ": resumed, found frozen (it was being killed)"), std::string::npos)
      << d_->log();
  ASSERT_TRUE(cri.stop_pod(pod_).ok());
  ASSERT_TRUE(cri.remove_pod(pod_).ok());
}

// ---- in the guest, where CRIU works ----

class CheckpointRestore : public PodFixture {
 protected:
  void SetUp() override {
    PodFixture::SetUp();
    out_ = std::make_unique<TempDir>("berth-checkpoint-out");
  }
  // Skips (with CRIU's own reason) where it does not work.
  bool criu_works(CriClient& cri) {
    nlohmann::json info = settled_checkpoint_info(cri);
    if (info.value("supported", false)) return true;
    reason_ = info.value("reason", info.dump());
    return false;
  }
  std::string another_pod(const std::string& name) {
    v1::PodSandboxConfig config = test_pod(name);
    if (!cgroup_parent_.empty()) config.mutable_linux()->set_cgroup_parent(cgroup_parent_);
    config.set_log_directory(logs_->path());
    std::string id;
    grpc::Status s = cri_->run_pod(config, &id);
    EXPECT_TRUE(s.ok()) << s.error_message();
    pod_config_ = config;
    return id;
  }
  std::unique_ptr<TempDir> out_;
  std::string reason_;
};

// Counts in a shell variable (memory only), prints each count, made a file and removed one of
// its image's.
constexpr const char* kCounter =
    "echo made-before > /made.txt; rm /etc/group; i=0; while :; do i=$((i+1)); echo $i; sleep 0.2; done";

TEST_F(CheckpointRestore, ACountingContainerContinuesInANewPod) {
  auto& cri = ready("first");
  if (!criu_works(cri)) GTEST_SKIP() << reason_;
  auto config = shell_container("counter", kCounter);
  std::string id = run(config);
  ASSERT_TRUE(eventually([&] { return numbers(log_of("counter")).size() >= 5; }, std::chrono::seconds(60)));
  const long before = numbers(log_of("counter")).back();
  const std::string archive = out_->path() + "/counter.tar";
  auto s = checkpoint_container(cri, id, archive, 600);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);  // it runs on
  struct stat st {};
  ASSERT_EQ(::stat(archive.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The layout CRI-O and containerd read (checkpointctl's names).
  std::string listing = run_output({"tar", "tf", archive});
  for (const char* member : {"checkpoint/inventory.img", "config.dump", "spec.dump", "status.dump", "rootfs-diff.tar",
                             "deleted.files", "container.log", "dump.log", "stats-dump", "bind.mounts"})
    EXPECT_NE(listing.find(member), std::string::npos) << member << " missing from:\n" << listing;
  std::string deleted = run_output({"tar", "xOf", archive, "deleted.files"});
  EXPECT_EQ(nlohmann::json::parse(deleted), nlohmann::json({"/etc/group"})) << deleted;
  auto dump = nlohmann::json::parse(run_output({"tar", "xOf", archive, "config.dump"}));
  EXPECT_EQ(dump.value("id", ""), id);
  EXPECT_EQ(dump.value("rootfsImageName", ""), image());
  // What CRI-O's restore reads of spec.dump, and containerd's of status.dump.
  auto spec_dump = nlohmann::json::parse(run_output({"tar", "xOf", archive, "spec.dump"}));
  EXPECT_EQ(spec_dump["annotations"].value("io.kubernetes.cri-o.ContainerName", ""), "counter") << spec_dump.dump();
  EXPECT_TRUE(nlohmann::json::parse(spec_dump["annotations"].value("io.kubernetes.cri-o.Annotations", "")).is_object());
  EXPECT_FALSE(spec_dump["process"]["args"].empty());
  // CRI-O's list of the bind mounts, with each source's type, but those its restore makes.
  auto binds = nlohmann::json::parse(run_output({"tar", "xOf", archive, "bind.mounts"}));
  ASSERT_TRUE(binds.is_array()) << binds.dump();
  bool hosts = false;
  for (const auto& b : binds) {
    EXPECT_NE(b.value("destination", ""), "/dev/shm") << binds.dump();
    EXPECT_NE(b.value("destination", ""), "/proc") << binds.dump();
    if (b.value("destination", "") == "/etc/hosts") {
      hosts = true;
      EXPECT_EQ(b.value("file_type", ""), "file");
      EXPECT_TRUE(fs::exists(b.value("source", ""))) << b.dump();
    }
  }
  EXPECT_TRUE(hosts) << binds.dump();
  auto status_dump = nlohmann::json::parse(run_output({"tar", "xOf", archive, "status.dump"}));
  EXPECT_EQ(status_dump["metadata"].value("name", ""), "counter") << status_dump.dump();
  EXPECT_EQ(status_dump["image"].value("image", ""), image());

  // The container and its pod go; the archive comes back in another pod.
  ASSERT_TRUE(cri.stop_container(id, 0).ok());
  ASSERT_TRUE(cri.remove_container(id).ok());
  ASSERT_TRUE(cri.stop_pod(pod_).ok());
  ASSERT_TRUE(cri.remove_pod(pod_).ok());
  const std::string old_log = logs_->path() + "/counter.log";
  ::unlink(old_log.c_str());
  pod_ = another_pod("second");
  auto restore = test_container("counter", archive, {});
  std::string restored;
  s = cri.create_container(pod_, restore, &restored, pod_config_);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_NE(restored, id);
  EXPECT_EQ(status(restored).image().image(), image());
  s = cri.start_container(restored);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // The log holds the old lines, then the count goes on from where the dump took it: never from 1.
  const size_t carried = numbers(run_output({"tar", "xOf", archive, "container.log"})).size();
  ASSERT_TRUE(eventually([&] { return numbers(log_of("counter")).size() >= carried + 3; }, std::chrono::seconds(60)))
      << log_of("counter");
  auto after = numbers(log_of("counter"));
  EXPECT_GE(after[carried], before + 1) << log_of("counter");
  for (size_t i = carried + 1; i < after.size(); ++i) EXPECT_EQ(after[i], after[i - 1] + 1);
  EXPECT_EQ(exec_out(restored, {"cat", "/made.txt"}), "made-before\n");
  EXPECT_EQ(exec_out(restored, {"/bin/sh", "-c", "test -e /etc/group && echo there || echo gone"}), "gone\n");
  // It runs in the new pod's network namespace (the pause's).
  v1::PodSandboxStatusResponse pod_status;
  ASSERT_TRUE(cri.pod_status(pod_, &pod_status).ok());
  auto pod_info = nlohmann::json::parse(pod_status.info().at("info"));
  const std::string pause_net = fs::read_symlink("/proc/" + std::to_string(pod_info.value("pid", 0)) + "/ns/net");
  EXPECT_EQ(exec_out(restored, {"/bin/sh", "-c", "readlink /proc/1/ns/net"}), pause_net + "\n");
  EXPECT_TRUE(dir_entries(d_->root() + "/restores").empty());
  EXPECT_TRUE(dir_entries(d_->root() + "/checkpoints").empty());
  // Its processes are in its own cgroup (where its limits and stats are), and the checkpointed
  // container's is not made again.
  v1::ContainerStatusResponse verbose;
  ASSERT_TRUE(cri.container_status(restored, &verbose, true).ok());
  auto info = nlohmann::json::parse(verbose.info().at("info"));
  const std::string pid = std::to_string(info.value("pid", 0));
  if (host_cgroup_v2()) {
    EXPECT_EQ(read_file("/proc/" + pid + "/cgroup"), "0::" + test_cgroup_parent() + "/" + restored + "\n");
    EXPECT_FALSE(fs::exists("/sys/fs/cgroup" + test_cgroup_parent() + "/" + id));
  }

  // The same archive as a checkpoint image in a registry (buildah's layout, checkpointctl's
  // annotation), pulled, and named as the image of another container of the pod.
  const std::string digest = run_output({std::string(BERTH_SOURCE_DIR) + "/tests/registry/push-checkpoint-image.py",
                                         registry_->url(), archive, "test/counter-checkpoint", "v1", "counter"});
  ASSERT_FALSE(digest.empty());
  const std::string checkpoint_image = registry_->host() + "/test/counter-checkpoint:v1";
  ASSERT_TRUE(cri.pull_image(checkpoint_image).ok());
  std::string from_image;
  s = cri.create_container(pod_, test_container("from-image", checkpoint_image, {}), &from_image, pod_config_);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(cri.start_container(from_image).ok());
  ASSERT_TRUE(eventually([&] { return numbers(log_of("from-image")).size() >= carried + 3; }, std::chrono::seconds(60)))
      << log_of("from-image");
  EXPECT_GE(numbers(log_of("from-image"))[carried], before + 1) << log_of("from-image");
  EXPECT_EQ(exec_out(from_image, {"cat", "/made.txt"}), "made-before\n");
  EXPECT_TRUE(dir_entries(d_->root() + "/restores").empty());
  // Its monitor holds the restored process as it holds a created one: its end is seen, with its code.
  ASSERT_TRUE(cri.stop_container(restored, 0).ok());
  auto stopped = wait_exited(restored);
  EXPECT_EQ(stopped.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(stopped.exit_code(), 128 + SIGKILL) << stopped.reason();
}

TEST_F(CheckpointRestore, ATimeoutTooShortFailsAndTheContainerRunsOn) {
  auto& cri = ready("pod");
  if (!criu_works(cri)) GTEST_SKIP() << reason_;
  std::string id = run(shell_container("counter", kCounter));
  ASSERT_TRUE(eventually([&] { return numbers(log_of("counter")).size() >= 2; }, std::chrono::seconds(60)));
  // In the emulated guest a dump takes seconds: one second is not enough.
  auto s = checkpoint_container(cri, id, out_->path() + "/short.tar", 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_TRUE(dir_entries(out_->path()).empty());
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
  const size_t counted = numbers(log_of("counter")).size();
  EXPECT_TRUE(eventually([&] { return numbers(log_of("counter")).size() >= counted + 3; }, std::chrono::seconds(60)))
      << "the container no longer counts: still frozen?";
  EXPECT_TRUE(dir_entries(d_->root() + "/checkpoints").empty());
}

TEST_F(CheckpointRestore, TwoCheckpointsOfOneContainerAtOnceOneIsRefused) {
  auto& cri = ready("pod");
  if (!criu_works(cri)) GTEST_SKIP() << reason_;
  std::string id = run(shell_container("c", "sleep 1000"));
  auto first =
      std::async(std::launch::async, [&] { return checkpoint_container(cri, id, out_->path() + "/1.tar", 600); });
  // The second asks while the first dumps (seconds, emulated).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto s = checkpoint_container(cri, id, out_->path() + "/2.tar", 600);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("already in progress"), std::string::npos) << s.error_message();
  auto f = first.get();
  EXPECT_TRUE(f.ok()) << f.error_message();
  EXPECT_EQ(dir_entries(out_->path()), std::vector<std::string>{"1.tar"});
}

TEST_F(CheckpointRestore, CorruptAndHostileArchivesAreRefusedLeavingNothing) {
  auto& cri = ready("pod");
  if (!criu_works(cri)) GTEST_SKIP() << reason_;
  TempDir work("berth-hostile-archive");
  const std::string outside = work / "outside";
  ::mkdir(outside.c_str(), 0755);
  auto tar = [&](const std::string& name, const std::string& dir, const std::vector<std::string>& extra) {
    std::vector<std::string> argv{"tar", "-cf", work / name, "-C", dir};
    argv.insert(argv.end(), extra.begin(), extra.end());
    run_output(argv);
    return work / name;
  };
  // A complete-looking archive whose parts are hostile.
  const std::string good = work / "good";
  fs::create_directories(good + "/checkpoint");
  write_file(good + "/checkpoint/inventory.img", "x");
  write_file(good + "/config.dump", nlohmann::json({{"rootfsImageName", image()}}).dump());
  write_file(work / "garbage.tar", std::string(4096, '\x7f'));
  std::vector<std::string> archives{work / "garbage.tar"};
  // A member climbing out, and one with an absolute name.
  archives.push_back(
      tar("climbs.tar", good, {"--transform=s,config.dump,../../outside/escaped,", "config.dump", "checkpoint"}));
  archives.push_back(
      tar("absolute.tar", good, {"-P", "--transform=s,^config.dump,/tmp/berth-escaped,", "config.dump"}));
  // A symlink member.
  ::symlink(outside.c_str(), (good + "/link").c_str());
  archives.push_back(tar("symlink.tar", good, {"config.dump", "checkpoint", "link"}));
  ::unlink((good + "/link").c_str());
  // A writable layer whose deletions climb out of the rootfs, and one whose tar writes through a symlink.
  write_file(good + "/deleted.files", "[\"/../../../../outside/victim\"]");
  archives.push_back(tar("deleted-climbs.tar", good, {"config.dump", "checkpoint", "deleted.files"}));
  ::unlink((good + "/deleted.files").c_str());
  const std::string layer = work / "layer";
  fs::create_directories(layer);
  ::symlink(outside.c_str(), (layer + "/out").c_str());
  write_file(layer + "/file", "through");
  run_output({"tar", "-cf", good + "/rootfs-diff.tar", "-C", layer, "out", "--transform=s,^file,out/written,", "file"});
  const std::string through_link = tar("layer-escapes.tar", good, {"config.dump", "checkpoint", "rootfs-diff.tar"});
  write_file(outside + "/victim", "still here");

  for (const auto& a : archives) {
    std::string id;
    auto s = cri.create_container(pod_, test_container("r", a, {}), &id, pod_config_);
    EXPECT_FALSE(s.ok()) << a;
    EXPECT_TRUE(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) << a << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("config.image.image"), std::string::npos) << a << ": " << s.error_message();
  }
  // A diff that writes through its own symlink is not refused: the link is replaced by a directory
  // of the new rootfs (libarchive's secure-symlinks unlink), so the file lands inside it.
  std::string id;
  auto s = cri.create_container(pod_, test_container("r", through_link, {}), &id, pod_config_);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(cri.remove_container(id).ok());
  EXPECT_EQ(dir_entries(outside), std::vector<std::string>{"victim"});
  EXPECT_EQ(read_file(outside + "/victim"), "still here");
  EXPECT_NE(::access("/tmp/berth-escaped", F_OK), 0);
  EXPECT_TRUE(dir_entries(d_->root() + "/restores").empty());
  EXPECT_TRUE(cri.list_containers().empty());
}

}  // namespace
}  // namespace berth::test
