// Stats readings against the real kernel: a process burning cpu with a 64 MiB buffer in cgroups the
// test creates, disk usage of a tree with hard links, /proc/<pid>/net/dev parsing, cpu rates; and
// PSI and block IO parsed from copies of kernel files (tests/unit/data/stats: v1 captured on a
// 6.18 hybrid host, v2 PSI and cpu.stat captured from its cgroup2 mount, io.stat as the kernel's
// cgroup-v2 documentation prints it), missing files, old kernels' lines and garbage.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include "berth/cadvisor_metrics.h"
#include "berth/cgroup_stats.h"
#include "berth/cpu_rate.h"
#include "berth/cri_pressure.h"
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
    nano_cores = rates.update("c", s.cpu_usage_ns, s.monotonic_ns);
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
  put("memory.stat",
      "anon 52428800\nfile 41943040\ninactive_file 20971520\nactive_file 20971520\npgfault 1234\npgmajfault 5\n");
  put("memory.swap.current", "4096\n");
  put("memory.swap.max", "max\n");
  put("pids.current", "7\n");
  auto s = read_cgroup_sample(
      {.relative_path = "/kubepods/pod1/c1", .cgroup_root = root.path(), .layout = CgroupLayout::v2});
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
  s = read_cgroup_sample(
      {.relative_path = "/kubepods/pod1/c1", .cgroup_root = root.path(), .layout = CgroupLayout::v2});
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
  // The same sample again (the stats answer from a background sample): the same rate.
  auto same = t.update("a", 1'500'000'000, 11'000'000'000);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(*same, 500'000'000u);
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
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier "
      "compressed\n"
      "    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0 "
      "         0\n"
      "  eth0: 5343221    4210    3    0    0     0          0         0   123456     987    7    0    0     0       0 "
      "         0\n";
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

// ---- PSI and block IO, from copies of kernel files ----

const std::string kData = std::string(BERTH_SOURCE_DIR) + "/tests/unit/data/stats";

std::string data_file(const std::string& rel) {
  std::ifstream in(kData + "/" + rel);
  EXPECT_TRUE(in) << rel;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Pressure, ParsesACgroupsCpuPressure) {
  auto p = parse_pressure(data_file("v2/kubepods/pod1/c1/cpu.pressure"));
  ASSERT_TRUE(p.has_value());
  ASSERT_TRUE(p->some.has_value());
  EXPECT_DOUBLE_EQ(p->some->avg10, 9.05);
  EXPECT_DOUBLE_EQ(p->some->avg60, 1.63);
  EXPECT_DOUBLE_EQ(p->some->avg300, 0.34);
  EXPECT_EQ(p->some->total_us, 1519443u);
  ASSERT_TRUE(p->full.has_value());
  EXPECT_DOUBLE_EQ(p->full->avg10, 0.0);
  EXPECT_EQ(p->full->total_us, 20882u);
}

TEST(Pressure, CpuOfKernelsBefore5_13HasNoFullLine) {
  // The file as kernels 4.20 to 5.12 write it: "some" only.
  auto p = parse_pressure("some avg10=1.52 avg60=0.48 avg300=0.11 total=31684119\n");
  ASSERT_TRUE(p.has_value());
  ASSERT_TRUE(p->some.has_value());
  EXPECT_EQ(p->some->total_us, 31684119u);
  EXPECT_FALSE(p->full.has_value());
  runtime::v1::PsiStats cri;
  pressure_to_cri(*p, &cri);
  EXPECT_TRUE(cri.has_some());
  EXPECT_FALSE(cri.has_full());  // absent, not zeros
}

TEST(Pressure, GarbageIsNoPressureAndBadLinesAreSkipped) {
  for (const char* text :
       {"", "\n", "garbage", "some", "some avg10=0.00 avg60=0.00 avg300=0.00",  // no total
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1", "some avg10=nan avg60=0 avg300=0 total=1",
        "some avg10=inf avg60=0 avg300=0 total=1", "some avg10=-0.5 avg60=0 avg300=0 total=1",
        "some avg10=1 avg10=1 avg60=0 avg300=0 total=1", "some avg10=1 avg60=0 avg300=0 total=1 junk",
        "some avg10=1 avg60=0 avg300=0 total=99999999999999999999", "some avg10= avg60=0 avg300=0 total=1",
        "SOME avg10=1 avg60=0 avg300=0 total=1", "partial avg10=1 avg60=0 avg300=0 total=1", "\x00\xff\n=\n full"}) {
    EXPECT_FALSE(parse_pressure(text).has_value()) << text;
  }
  // A good "full" next to a broken "some"; a second "some" after a good one is not read; fields
  // a later kernel may add are ignored; tabs and runs of spaces separate fields.
  auto p = parse_pressure(
      "some avg10=x avg60=0 avg300=0 total=1\n"
      "full avg10=0.50 avg60=0.25 avg300=0.10 total=700 new=1\n");
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->some.has_value());
  ASSERT_TRUE(p->full.has_value());
  EXPECT_EQ(p->full->total_us, 700u);
  p = parse_pressure("some\tavg10=1.00  avg60=2.00 avg300=3.00 total=4\nsome avg10=9 avg60=9 avg300=9 total=9\n");
  ASSERT_TRUE(p.has_value() && p->some.has_value());
  EXPECT_EQ(p->some->total_us, 4u);
  EXPECT_DOUBLE_EQ(p->some->avg300, 3.0);
}

TEST(Pressure, CriTotalsAreNanoseconds) {
  auto p = parse_pressure(data_file("v2/kubepods/pod1/c1/io.pressure"));
  ASSERT_TRUE(p.has_value());
  runtime::v1::PsiStats cri;
  pressure_to_cri(*p, &cri);
  EXPECT_EQ(cri.some().total(), 4480u * 1000);  // kernel microseconds, CRI nanoseconds
  EXPECT_EQ(cri.full().total(), 4476u * 1000);
  EXPECT_DOUBLE_EQ(cri.some().avg10(), 0.0);
  EXPECT_EQ(psi_total_ns(UINT64_MAX / 1000 + 1), UINT64_MAX);  // saturates, never wraps
}

TEST(IoStat, SumsTheDevicesOfAV2File) {
  auto io = parse_io_stat(data_file("v2/kubepods/pod1/c1/io.stat"));
  ASSERT_TRUE(io.has_value());
  EXPECT_EQ(io->read_bytes, 1459200u + 90430464u);
  EXPECT_EQ(io->write_bytes, 314773504u + 299008000u);
  EXPECT_EQ(io->reads, 192u + 8950u);
  EXPECT_EQ(io->writes, 353u + 1252u);
  // A cgroup that did no IO has an empty file: zeros, and that is data.
  auto none = parse_io_stat("");
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->read_bytes + none->write_bytes + none->reads + none->writes, 0u);
  // Keys io.cost and later kernels add are ignored; sums stop at the top.
  io = parse_io_stat(
      "8:0 rbytes=18446744073709551615 wbytes=1 rios=1 wios=1 cost.vrate=100.00 cost.usage=5\n"
      "8:16 rbytes=5 wbytes=1 rios=1 wios=1\n");
  ASSERT_TRUE(io.has_value());
  EXPECT_EQ(io->read_bytes, UINT64_MAX);
  EXPECT_EQ(io->writes, 2u);
  for (const char* text : {"garbage", "8:0 rbytes", "8:0 rbytes=-1", "8:0 rbytes=1x", "8 rbytes=1", "a:b rbytes=1",
                           "8:0 rbytes=1\nTotal 5", "rbytes=1 8:0", "8:0 rbytes=99999999999999999999"}) {
    EXPECT_FALSE(parse_io_stat(text).has_value()) << text;
  }
}

TEST(Blkio, SumsReadAndWriteOfV1Files) {
  auto bytes = parse_blkio_rwstat(data_file("v1/blkio/kubepods/pod1/c1/blkio.throttle.io_service_bytes_recursive"));
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(bytes->read, 25178112u);
  EXPECT_EQ(bytes->write, 25165824u);
  auto ops = parse_blkio_rwstat(data_file("v1/blkio/kubepods/pod1/c1/blkio.throttle.io_serviced"));
  ASSERT_TRUE(ops.has_value());
  EXPECT_EQ(ops->read, 386u);
  EXPECT_EQ(ops->write, 48u);
  // Two devices are summed; Sync, Async, Discard and the Total lines are not counted again.
  auto two = parse_blkio_rwstat(
      "8:0 Read 100\n8:0 Write 10\n8:0 Sync 110\n8:0 Async 0\n8:0 Discard 0\n8:0 Total 110\n"
      "254:0 Read 5\n254:0 Write 1\n254:0 Sync 6\n254:0 Async 0\n254:0 Discard 0\n254:0 Total 6\nTotal 116\n");
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->read, 105u);
  EXPECT_EQ(two->write, 11u);
  // What an unthrottled cgroup reads on recent kernels.
  auto idle = parse_blkio_rwstat("Total 0\n");
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->read + idle->write, 0u);
  for (const char* text : {"garbage", "8:0 Read", "8:0 Read x", "8:0 Read 1 2", "Read 8:0 1", "Total", "Total x",
                           "8:0 Read -1", "8:0 rbytes=1 wbytes=2"}) {
    EXPECT_FALSE(parse_blkio_rwstat(text).has_value()) << text;
  }
}

TEST(CgroupStats, V2SampleCarriesPsiAndIo) {
  auto s = read_cgroup_sample(
      {.relative_path = "/kubepods/pod1/c1", .cgroup_root = kData + "/v2", .layout = CgroupLayout::v2});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cpu_usage_ns, 5'970'684'000u);
  ASSERT_TRUE(s->io.has_value());
  EXPECT_EQ(s->io->read_bytes, 1459200u + 90430464u);
  ASSERT_TRUE(s->cpu_pressure && s->cpu_pressure->some && s->cpu_pressure->full);
  EXPECT_EQ(s->cpu_pressure->some->total_us, 1519443u);
  ASSERT_TRUE(s->memory_pressure && s->memory_pressure->some);
  EXPECT_EQ(s->memory_pressure->some->total_us, 0u);  // a real zero: the file says so
  ASSERT_TRUE(s->io_pressure && s->io_pressure->full);
  EXPECT_EQ(s->io_pressure->full->total_us, 4476u);
}

TEST(CgroupStats, V1SampleReadsBlkioAndPsiOfTheUnifiedMount) {
  auto s = read_cgroup_sample(
      {.relative_path = "/kubepods/pod1/c1", .cgroup_root = kData + "/v1", .layout = CgroupLayout::v1});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cpu_usage_ns, 7946027640u);
  ASSERT_TRUE(s->io.has_value());
  EXPECT_EQ(s->io->read_bytes, 25178112u);
  EXPECT_EQ(s->io->write_bytes, 25165824u);
  EXPECT_EQ(s->io->reads, 386u);
  EXPECT_EQ(s->io->writes, 48u);
  ASSERT_TRUE(s->cpu_pressure && s->cpu_pressure->some);
  EXPECT_EQ(s->cpu_pressure->some->total_us, 2052764u);
  EXPECT_DOUBLE_EQ(s->cpu_pressure->some->avg10, 11.24);
  ASSERT_TRUE(s->io_pressure && s->io_pressure->some);
  EXPECT_EQ(s->io_pressure->some->total_us, 23234u);
}

// The copies in a temp dir with files taken away: each figure the kernel no longer gives is absent.
TEST(CgroupStats, MissingFilesLeaveTheirFiguresAbsent) {
  test::TempDir root;
  fs::copy(kData, root.path(), fs::copy_options::recursive);
  const std::string v2 = root.path() + "/v2/kubepods/pod1/c1";
  fs::remove(v2 + "/cpu.pressure");
  fs::remove(v2 + "/io.stat");
  std::ofstream(v2 + "/io.pressure") << "garbage\n";
  auto s = read_cgroup_sample(
      {.relative_path = "/kubepods/pod1/c1", .cgroup_root = root.path() + "/v2", .layout = CgroupLayout::v2});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->cpu_pressure.has_value());
  EXPECT_FALSE(s->io.has_value());
  EXPECT_FALSE(s->io_pressure.has_value());
  EXPECT_TRUE(s->memory_pressure.has_value());
  EXPECT_EQ(s->memory_usage_bytes, 100u << 20);  // the rest is read as before
  // A v1 host without the cgroup2 mount (or PSI): no PSI at all. Without the _recursive files
  // (older kernels) the plain ones are read; with a blkio file gone, no IO.
  fs::remove_all(root.path() + "/v1/unified");
  const std::string blkio = root.path() + "/v1/blkio/kubepods/pod1/c1";
  fs::remove(blkio + "/blkio.throttle.io_service_bytes_recursive");
  fs::remove(blkio + "/blkio.throttle.io_serviced_recursive");
  CgroupLocation v1{
      .relative_path = "/kubepods/pod1/c1", .cgroup_root = root.path() + "/v1", .layout = CgroupLayout::v1};
  s = read_cgroup_sample(v1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->cpu_pressure || s->memory_pressure || s->io_pressure);
  ASSERT_TRUE(s->io.has_value());
  EXPECT_EQ(s->io->read_bytes, 25178112u);
  fs::remove(blkio + "/blkio.throttle.io_serviced");
  s = read_cgroup_sample(v1);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->io.has_value());
}

TEST(CadvisorMetrics, IoAndPressureValuesComeFromTheSample) {
  auto s = read_cgroup_sample(
      {.relative_path = "/kubepods/pod1/c1", .cgroup_root = kData + "/v1", .layout = CgroupLayout::v1});
  ASSERT_TRUE(s.ok());
  std::map<std::string, std::optional<uint64_t>> got;
  for (const CadvisorMetric& m : cadvisor_metrics()) {
    EXPECT_TRUE(got.emplace(m.name, cgroup_metric_value(m.source, *s)).second) << "twice: " << m.name;
    EXPECT_EQ(cadvisor_label_keys(m).size(), m.per_interface ? 7u : 6u) << m.name;
  }
  EXPECT_EQ(got["container_fs_reads_bytes_total"], 25178112u);
  EXPECT_EQ(got["container_fs_writes_bytes_total"], 25165824u);
  EXPECT_EQ(got["container_fs_reads_total"], 386u);
  EXPECT_EQ(got["container_fs_writes_total"], 48u);
  // Whole seconds of the kernel's microseconds (2052764 us).
  EXPECT_EQ(got["container_pressure_cpu_waiting_seconds_total"], 2u);
  EXPECT_EQ(got["container_pressure_cpu_stalled_seconds_total"], 0u);
  EXPECT_EQ(got["container_pressure_memory_waiting_seconds_total"], 0u);
  EXPECT_EQ(got["container_pressure_io_stalled_seconds_total"], 0u);
  // Figures computed elsewhere (cpu, memory, network) are not the sample's to give.
  EXPECT_FALSE(got["container_cpu_usage_seconds_total"].has_value());
  EXPECT_FALSE(got["container_network_receive_bytes_total"].has_value());
  // Without PSI or IO: no value, so the metric is left out rather than sent as zero.
  CgroupSample bare;
  bare.cpu_pressure = Pressure{.some = PsiFigures{.total_us = 3'500'000}, .full = std::nullopt};
  EXPECT_EQ(cgroup_metric_value(MetricSource::cpu_pressure_waiting, bare), 3u);
  EXPECT_FALSE(cgroup_metric_value(MetricSource::cpu_pressure_stalled, bare).has_value());  // kernel < 5.13
  EXPECT_FALSE(cgroup_metric_value(MetricSource::io_pressure_waiting, bare).has_value());
  EXPECT_FALSE(cgroup_metric_value(MetricSource::fs_read_bytes, bare).has_value());
}

}  // namespace
}  // namespace berth
