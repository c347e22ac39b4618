// Stats readings against the real kernel: a process burning cpu with a 64 MiB buffer in cgroups the
// test creates, disk usage of a tree with hard links, /proc/<pid>/net/dev parsing, cpu rates.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "berth/cgroup_stats.h"
#include "berth/cpu_rate.h"
#include "berth/file_tree.h"
#include "berth/net_dev.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint64_t MiB = 1024 * 1024;

// A cgroup made by the test in every controller the reader uses; removed (after its processes
// are killed) even when the test fails.
class TestCgroup {
 public:
  TestCgroup() : layout_(detect_cgroup_layout()) {
    rel_ = "/berth-stats-test-" + std::to_string(::getpid());
    for (const auto& d : dirs()) fs::create_directories(d);
  }
  ~TestCgroup() {
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
    }
    for (const auto& d : dirs()) {
      for (int i = 0; i < 50 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++i) std::this_thread::sleep_for(20ms);
    }
  }
  std::vector<std::string> dirs() const {
    if (layout_ == CgroupLayout::v2) return {"/sys/fs/cgroup" + rel_};
    return {"/sys/fs/cgroup/memory" + rel_, "/sys/fs/cgroup/cpuacct" + rel_, "/sys/fs/cgroup/pids" + rel_};
  }
  // Starts `argv` inside the cgroup: the child joins before exec, so nothing runs outside.
  void run(std::vector<std::string> argv) {
    auto procs = dirs();
    child_ = ::fork();
    if (child_ == 0) {
      for (auto& d : procs) {
        int fd = ::open((d + "/cgroup.procs").c_str(), O_WRONLY);
        if (fd < 0 || ::write(fd, "0", 1) != 1) ::_exit(120);
        ::close(fd);
      }
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  CgroupLocation location() const { return {.relative_path = rel_, .layout = layout_}; }

 private:
  CgroupLayout layout_;
  std::string rel_;
  pid_t child_ = -1;
};

TEST(CgroupStats, BusyProcessWith64MiBShowsCpuAndWorkingSet) {
  TestCgroup cg;
  // busybox dd with bs=64M reads /dev/zero into one 64 MiB buffer over and over: it burns cpu and
  // keeps 64 MiB of anonymous memory touched.
  cg.run({"/bin/busybox", "dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1000000"});
  CpuRateTracker rates;
  std::optional<uint64_t> nano_cores;
  CgroupSample s;
  for (int i = 0; i < 30 && !nano_cores; ++i) {
    std::this_thread::sleep_for(300ms);
    auto r = read_cgroup_sample(cg.location());
    ASSERT_TRUE(r.ok()) << r.status().message();
    s = *r;
    if (s.memory_working_set_bytes < 64 * MiB) continue;  // dd still filling its buffer
    nano_cores = rates.update("c", s.cpu_usage_ns, s.timestamp_ns);
  }
  ASSERT_TRUE(nano_cores.has_value()) << "working set never reached 64 MiB: " << s.memory_working_set_bytes;
  EXPECT_GT(s.cpu_usage_ns, 10'000'000u);
  EXPECT_GE(s.memory_working_set_bytes, 64 * MiB);
  EXPECT_LT(s.memory_working_set_bytes, 96 * MiB);
  EXPECT_GE(s.memory_usage_bytes, s.memory_working_set_bytes);
  EXPECT_GE(s.memory_rss_bytes, 60 * MiB);
  EXPECT_GT(s.page_faults, 0u);
  ASSERT_TRUE(s.pids_current.has_value());
  EXPECT_EQ(*s.pids_current, 1u);
  EXPECT_EQ(s.memory_limit_bytes, 0u);
  EXPECT_EQ(memory_available_bytes(s), 0u);
  // dd spins in the kernel copying zeroes: it should use a good part of a core; the bound is loose
  // because the build machine is shared.
  EXPECT_GT(*nano_cores, 100'000'000u) << "usage_nano_cores " << *nano_cores;
  EXPECT_LT(*nano_cores, 2'200'000'000u) << "more than the machine's 2 cores";
}

TEST(CgroupStats, LimitGivesAvailableBytes) {
  TestCgroup cg;
  std::string limit_file = cg.location().layout == CgroupLayout::v2
                               ? "/sys/fs/cgroup" + cg.location().relative_path + "/memory.max"
                               : "/sys/fs/cgroup/memory" + cg.location().relative_path + "/memory.limit_in_bytes";
  std::ofstream(limit_file) << 256 * MiB;
  auto s = read_cgroup_sample(cg.location());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->memory_limit_bytes, 256 * MiB);
  EXPECT_EQ(memory_available_bytes(*s), 256 * MiB - s->memory_working_set_bytes);
}

TEST(CgroupStats, MissingCgroupIsNotFoundAndRelativePathInvalid) {
  auto gone = read_cgroup_sample({.relative_path = "/berth-no-such-cgroup", .layout = detect_cgroup_layout()});
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::not_found);
  EXPECT_NE(gone.status().message().find("/berth-no-such-cgroup"), std::string::npos);
  auto rel = read_cgroup_sample({.relative_path = "kubepods"});
  ASSERT_FALSE(rel.ok());
  EXPECT_EQ(rel.status().code(), Code::invalid_argument);
}

// The v2 files as the kernel writes them (this host is v1, so a copy on disk stands in for cgroupfs).
TEST(CgroupStats, V2FilesGiveTheSameFigures) {
  test::TempDir root;
  const std::string dir = root.path() + "/kubepods/pod1/c1";
  fs::create_directories(dir);
  auto put = [&](const std::string& name, const std::string& text) { std::ofstream(dir + "/" + name) << text; };
  put("cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n");
  put("memory.current", "104857600\n");
  put("memory.max", "268435456\n");
  put("memory.stat", "anon 52428800\nfile 41943040\ninactive_file 20971520\nactive_file 20971520\npgfault 1234\npgmajfault 5\n");
  put("memory.swap.current", "4096\n");
  put("memory.swap.max", "max\n");
  put("pids.current", "7\n");
  auto s = read_cgroup_sample({.relative_path = "/kubepods/pod1/c1", .cgroup_root = root.path(), .layout = CgroupLayout::v2});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cpu_usage_ns, 2'500'000'000u);
  EXPECT_EQ(s->memory_usage_bytes, 100u << 20);
  EXPECT_EQ(s->memory_working_set_bytes, 80u << 20);  // usage minus inactive_file
  EXPECT_EQ(s->memory_rss_bytes, 50u << 20);
  EXPECT_EQ(s->memory_limit_bytes, 256u << 20);
  EXPECT_EQ(memory_available_bytes(*s), 176u << 20);
  EXPECT_EQ(s->page_faults, 1234u);
  EXPECT_EQ(s->major_page_faults, 5u);
  ASSERT_TRUE(s->swap_usage_bytes.has_value());
  EXPECT_EQ(*s->swap_usage_bytes, 4096u);
  EXPECT_EQ(s->swap_limit_bytes, 0u);  // "max"
  EXPECT_EQ(s->pids_current.value_or(0), 7u);
  // "max" memory: no limit, nothing available reported.
  put("memory.max", "max\n");
  s = read_cgroup_sample({.relative_path = "/kubepods/pod1/c1", .cgroup_root = root.path(), .layout = CgroupLayout::v2});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->memory_limit_bytes, 0u);
  EXPECT_EQ(memory_available_bytes(*s), 0u);
}

TEST(CgroupStats, HybridHostCountsAsV1) {
  // This kind of host mounts cgroup2 only at /sys/fs/cgroup/unified; controllers are v1.
  if (fs::exists("/sys/fs/cgroup/memory/memory.stat")) {
    EXPECT_EQ(detect_cgroup_layout(), CgroupLayout::v1);
  }
  if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
    EXPECT_EQ(detect_cgroup_layout(), CgroupLayout::v2);
  }
}

TEST(CpuRateTracker, RateFromPreviousSample) {
  CpuRateTracker t;
  EXPECT_FALSE(t.update("a", 1'000'000'000, 10'000'000'000).has_value());
  auto r = t.update("a", 1'500'000'000, 11'000'000'000);  // 0.5 s of cpu in 1 s
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 500'000'000u);
  EXPECT_FALSE(t.update("a", 1'600'000'000, 11'000'000'000).has_value());  // no time passed
  EXPECT_FALSE(t.update("a", 100, 12'000'000'000).has_value());            // counter reset
  t.forget("a");
  EXPECT_FALSE(t.update("a", 200, 13'000'000'000).has_value());
}

TEST(CpuRateTracker, RetainForgetsObjectsThatAreGone) {
  CpuRateTracker t;
  (void)t.update("kept", 0, 1'000'000'000);
  (void)t.update("gone", 0, 1'000'000'000);
  t.retain({"kept"});
  EXPECT_TRUE(t.update("kept", 1'000'000'000, 2'000'000'000).has_value());
  EXPECT_FALSE(t.update("gone", 1'000'000'000, 2'000'000'000).has_value());  // a first sample again
}

TEST(DiskUsage, CountsBytesAndInodesOnceForHardLinks) {
  test::TempDir dir;
  fs::create_directories(dir / "a/b");
  test::write_file(dir / "a/b/one", std::string(1 * MiB, 'x'));
  ASSERT_EQ(::link((dir / "a/b/one").c_str(), (dir / "a/two").c_str()), 0);
  fs::create_symlink("one", dir / "a/b/three");
  auto before = measure_disk_usage(dir.path());
  ASSERT_TRUE(before.ok()) << before.status().message();
  // root, a, a/b, one (=two), three
  EXPECT_EQ(before->inodes, 5u);
  EXPECT_GE(before->bytes, 1 * MiB);
  EXPECT_LT(before->bytes, 1 * MiB + 64 * 1024);
  test::write_file(dir / "a/four", std::string(2 * MiB, 'y'));
  auto after = measure_disk_usage(dir.path());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->inodes, 6u);
  EXPECT_GE(after->bytes, before->bytes + 2 * MiB);
  auto missing = measure_disk_usage(dir / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::not_found);
}

TEST(NetDev, ParsesCountersAndSkipsLoopback) {
  const std::string text =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
      "    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0\n"
      "  eth0: 5343221    4210    3    0    0     0          0         0   123456     987    7    0    0     0       0          0\n";
  auto ifs = parse_net_dev(text);
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(ifs[0].name, "eth0");
  EXPECT_EQ(ifs[0].rx_bytes, 5343221u);
  EXPECT_EQ(ifs[0].rx_errors, 3u);
  EXPECT_EQ(ifs[0].tx_bytes, 123456u);
  EXPECT_EQ(ifs[0].tx_errors, 7u);
}

TEST(NetDev, ReadsTheNamespaceOfAProcess) {
  auto ifs = read_net_dev(::getpid());
  ASSERT_TRUE(ifs.ok()) << ifs.status().message();
  size_t expected = 0;
  for (const auto& e : fs::directory_iterator("/sys/class/net"))
    if (e.path().filename() != "lo") ++expected;
  EXPECT_EQ(ifs->size(), expected);
  auto gone = read_net_dev(999'999'999);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::not_found);
}

}  // namespace
}  // namespace berth
