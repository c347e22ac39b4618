// Full filesystems made for real: berthd's state dir, a pod's log dir and its root each on a
// small tmpfs of the test's own, filled with a file (out of space) or with empty files (out of
// inodes). Each rpc that must write there fails with RESOURCE_EXHAUSTED naming the path, leaves
// no record half-written, and works again once space is freed, without a restart; a container
// whose log cannot be written runs on and its lost output is counted and logged.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

// A tmpfs of `size` bytes and `inodes` inodes mounted at a dir of the test's; detached on
// destruction (lazily: a daemon may still hold a file there).
class SmallFilesystem {
 public:
  SmallFilesystem(const std::string& dir, const std::string& size, int inodes) : dir_(dir) {
    fs::create_directories(dir_);
    std::string opts = "size=" + size + ",nr_inodes=" + std::to_string(inodes) + ",mode=0755";
    mounted_ = ::mount("berth-full-disk-test", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) == 0;
    fs::create_directories(fillers());
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove(dir_, ec);
  }
  bool mounted() const { return mounted_; }
  const std::string& path() const { return dir_; }

  // Every byte taken: one file grown until the filesystem refuses.
  void fill_space() {
    int fd = ::open((fillers() + "/space").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    static char block[64 << 10];
    for (size_t n = sizeof block; n >= 1;)
      if (::write(fd, block, n) < 0) n /= 2;
    ::close(fd);
  }
  // Every inode taken: empty files until the filesystem refuses.
  void fill_inodes() {
    for (int i = 0;; ++i) {
      int fd = ::open((fillers() + "/" + std::to_string(i)).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) break;
      ::close(fd);
    }
  }
  void free_all() {
    for (const auto& e : fs::directory_iterator(fillers())) fs::remove(e.path());
  }

 private:
  std::string fillers() const { return dir_ + "/.fillers"; }
  std::string dir_;
  bool mounted_ = false;
};

// Files of a state or log tree that a crash-safe writer would never leave: temp files of an
// atomic write, and records that do not parse.
std::vector<std::string> broken_files(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    const auto& p = it->path();
    if (p.filename() == ".fillers") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    std::string name = p.filename().string();
    if (name.find(".tmp") != std::string::npos) out.push_back(p.string() + " (temp file)");
    if (p.extension() == ".json") {
      std::string text = read_file(p.string());
      if (!nlohmann::json::accept(text)) out.push_back(p.string() + " (does not parse)");
    }
  }
  return out;
}

#define EXPECT_OK(call)                                   \
  do {                                                    \
    grpc::Status status_ = (call);                        \
    EXPECT_TRUE(status_.ok()) << status_.error_message(); \
  } while (0)

#define EXPECT_EXHAUSTED(call, path)                                                                         \
  do {                                                                                                       \
    grpc::Status s_ = (call);                                                                                \
    EXPECT_EQ(s_.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << #call << ": " << s_.error_message(); \
    EXPECT_NE(s_.error_message().find(path), std::string::npos) << #call << ": " << s_.error_message();      \
  } while (0)

class FullDisk : public PodFixture {
 protected:
  // The pods are removed and the daemon stopped while their filesystems are still there.
  void TearDown() override {
    PodFixture::TearDown();
    if (d_) d_->stop();
    filesystems_.clear();
  }
  SmallFilesystem& small_filesystem(const std::string& name, const std::string& size, int inodes) {
    filesystems_.push_back(std::make_unique<SmallFilesystem>(scratch() / name, size, inodes));
    return *filesystems_.back();
  }
  std::vector<std::unique_ptr<SmallFilesystem>> filesystems_;
  // A berthd whose state dir is on `state_fs` (when given); root stays on the test's scratch dir.
  CriClient& start(SmallFilesystem* state_fs, SmallFilesystem* root_fs = nullptr) {
    TempDir& dirs = scratch();
    std::string state = state_fs ? state_fs->path() + "/state" : dirs / "state";
    std::string root = root_fs ? root_fs->path() + "/root" : dirs / "root";
    metrics_port_ = free_loopback_port();
    d_ = &daemon_at({.config_toml = "metrics_address = \"127.0.0.1:" + std::to_string(metrics_port_) + "\"\n"},
                    dirs / "berth.sock", root, state);
    cri_ = std::make_unique<CriClient>(*d_);
    EXPECT_OK(cri_->pull_image(image()));
    return *cri_;
  }
  v1::PodSandboxConfig pod(const std::string& name, const std::string& logs) {
    v1::PodSandboxConfig c = test_pod(name);
    c.set_log_directory(logs);
    return c;
  }
  double metric(const std::string& series) {
    std::string text = http_get(metrics_port_, "/metrics");
    size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
  }
  int metrics_port_ = 0;
  std::string sleeper(const std::string& pod_id, const v1::PodSandboxConfig& config, const std::string& name) {
    std::string id;
    EXPECT_OK(cri_->create_container(pod_id, test_container(name, image(), {"sleep", "100000"}), &id, config));
    return id;
  }
};

// Out of space or out of inodes, as the parameter says.
class FullOf : public FullDisk, public ::testing::WithParamInterface<bool> {
 protected:
  void fill(SmallFilesystem& fs) {
    if (GetParam())
      fs.fill_inodes();
    else
      fs.fill_space();
  }
};
class FullStateDir : public FullOf {};
class FullRoot : public FullOf {};

TEST_P(FullStateDir, RefusesNewWorkNamingItAndRecoversWithoutARestart) {
  SmallFilesystem& state = small_filesystem("state-fs", "8m", 4096);
  ASSERT_TRUE(state.mounted());
  CriClient& cri = start(&state);
  auto config = pod("full-state", logs_->path());
  std::string pod_id;
  ASSERT_OK(cri.run_pod(config, &pod_id));
  std::string running = sleeper(pod_id, config, "running");
  ASSERT_OK(cri.start_container(running));
  std::string created = sleeper(pod_id, config, "created");

  // Exits while the disk is full are still recorded: the monitor took the exit file's room first.
  std::string exits = sleeper(pod_id, config, "exits");
  ASSERT_OK(cri.start_container(exits));

  fill(state);
  std::string id;
  EXPECT_EXHAUSTED(cri.run_pod(test_pod("refused"), &id), state.path());
  EXPECT_EXHAUSTED(cri.create_container(pod_id, test_container("refused", image(), {"true"}), &id, config),
                   state.path());
  EXPECT_EXHAUSTED(cri.start_container(created), state.path());
  EXPECT_EQ(status(created).state(), v1::CONTAINER_CREATED);
  // berth-exec writes nothing there: a person may still look into a container of a full node.
  v1::ExecSyncResponse r;
  ASSERT_OK(cri.exec_sync(running, {"echo", "still"}, &r, 10));
  EXPECT_EQ(r.stdout(), "still\n");
  ASSERT_OK(cri.stop_container(exits, 0));
  EXPECT_EQ(status(exits).exit_code(), 137);
  EXPECT_EQ(cri.list_pods().size(), 1u);
  EXPECT_EQ(cri.list_containers().size(), 3u);
  EXPECT_EQ(broken_files(state.path()), std::vector<std::string>{});
  EXPECT_EQ(status(running).state(), v1::CONTAINER_RUNNING);

  state.free_all();
  ASSERT_OK(cri.run_pod(test_pod("after"), &id));
  ASSERT_OK(cri.start_container(created));
  ASSERT_OK(cri.exec_sync(running, {"true"}, &r, 10));
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(cri.list_pods().size(), 2u);
  // And what the full disk saw is what a restarted berthd finds.
  ASSERT_EQ(d_->stop(), 0);
  d_ = &daemon_at({.config_toml = "metrics_address = \"127.0.0.1:" + std::to_string(metrics_port_) + "\"\n"},
                  d_->socket(), d_->root(), d_->state());
  cri_ = std::make_unique<CriClient>(*d_);
  EXPECT_EQ(status(exits).exit_code(), 137);
  EXPECT_EQ(status(running).state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(status(created).state(), v1::CONTAINER_RUNNING);
}

// The root full: a pull is refused naming it and leaves nothing in the store (no image, no blob
// or layer it would have kept), pods and containers too, and a pull works once space is back.
TEST_P(FullRoot, RefusesPullsAndPodsAndKeepsTheStoreWhole) {
  SmallFilesystem& root = small_filesystem("root-fs", "64m", 8192);
  ASSERT_TRUE(root.mounted());
  CriClient& cri = start(nullptr, &root);
  auto config = pod("full-root", logs_->path());
  std::string pod_id;
  ASSERT_OK(cri.run_pod(config, &pod_id));
  std::string running = sleeper(pod_id, config, "running");
  ASSERT_OK(cri.start_container(running));
  ASSERT_OK(cri.remove_container(running));
  ASSERT_OK(cri.remove_image(image()));
  ASSERT_TRUE(cri.list_images().empty());
  auto files = [&] {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root.path() + "/root/images")) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto before = files();

  fill(root);
  std::string id;
  EXPECT_EXHAUSTED(cri.pull_image(image()), root.path());
  EXPECT_TRUE(cri.list_images().empty());
  EXPECT_EQ(files(), before);
  EXPECT_EXHAUSTED(cri.run_pod(test_pod("refused"), &id), root.path());
  EXPECT_EQ(cri.list_pods().size(), 1u);
  EXPECT_EQ(broken_files(root.path()), std::vector<std::string>{});

  root.free_all();
  ASSERT_OK(cri.pull_image(image()));
  EXPECT_EQ(cri.list_images().size(), 1u);
  std::string again = sleeper(pod_id, config, "again");
  ASSERT_OK(cri.start_container(again));
  ASSERT_OK(cri.run_pod(test_pod("after"), &id));
}

const auto kSpaceOrInodes = [](const auto& info) { return info.param ? "Inodes" : "Space"; };
INSTANTIATE_TEST_SUITE_P(OutOf, FullStateDir, ::testing::Values(false, true), kSpaceOrInodes);
INSTANTIATE_TEST_SUITE_P(OutOf, FullRoot, ::testing::Values(false, true), kSpaceOrInodes);

// The log directory full under a container that writes all the time: it runs on, its lost output
// is counted (metrics) and logged, the file holds whole records only, and once space is back the
// output goes on in the same file.
TEST_F(FullDisk, AFullLogDirDropsAndCountsOutputWithoutStoppingTheContainer) {
  SmallFilesystem& logs = small_filesystem("log-fs", "4m", 4096);
  ASSERT_TRUE(logs.mounted());
  CriClient& cri = start(nullptr);
  auto config = pod("full-logs", logs.path() + "/pod");
  std::string pod_id;
  ASSERT_OK(cri.run_pod(config, &pod_id));
  std::string writer;
  ASSERT_OK(cri.create_container(
      pod_id,
      test_container("writer", image(),
                     // A hundred records a second: a writer as fast as it can be refilled the 4 MiB the moment
                     // space came back, so whether berthd ever saw the log take output again was a race.
                     {"/bin/sh", "-c",
                      "i=0; while :; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; i=$((i+1)); sleep 0.01; done"}),
      &writer, config));
  ASSERT_OK(cri.start_container(writer));
  const std::string log = logs.path() + "/pod/writer.log";
  ASSERT_TRUE(wait_for_file_text(log, "line-10-"));

  logs.fill_space();
  ASSERT_TRUE(wait_for_file_text(d_->dir() + "/berthd.log", "takes no more output", 20s))
      << "log " << fs::file_size(log) << " bytes, lost " << metric("berth_container_log_lost_bytes_total")
      << " bytes, the container " << v1::ContainerState_Name(status(writer).state()) << "\n"
      << d_->log();
  std::string id;
  EXPECT_EXHAUSTED(cri.run_pod(pod("refused", logs.path() + "/pod"), &id), logs.path());
  EXPECT_EXHAUSTED(cri.create_container(pod_id, test_container("refused", image(), {"true"}), &id, config),
                   logs.path());
  EXPECT_EQ(status(writer).state(), v1::CONTAINER_RUNNING);
  v1::ExecSyncResponse r;
  ASSERT_OK(cri.exec_sync(writer, {"true"}, &r, 10));

  size_t full_size = fs::file_size(log);
  logs.free_all();
  ASSERT_TRUE(wait_for_file_text(d_->dir() + "/berthd.log", "takes output again", 20s)) << d_->log();
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (fs::file_size(log) <= full_size + 4096 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  EXPECT_GT(fs::file_size(log), full_size + 4096);
  ASSERT_OK(cri.stop_container(writer, 0));
  // Whole CRI records only: "<time> <stream> <F|P> <text>", each line complete.
  std::istringstream lines(read_file(log));
  int n = 0, bad = 0;
  for (std::string line; std::getline(lines, line); ++n)
    if (line.find(" stdout F line-") == std::string::npos || line.substr(line.size() - 8) != "xxxxxxxx") ++bad;
  EXPECT_GT(n, 100);
  EXPECT_EQ(bad, 0);
  EXPECT_GT(metric("berth_container_log_lost_bytes_total"), 0);
}

}  // namespace
}  // namespace berth::test
