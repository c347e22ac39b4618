// posix/: the leftovers of atomic writes, spawn_child's errors and death signal, the process
// identity readers and the fault points.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <set>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "berth/file_text.h"
#include "berth/own_privileges.h"
#include "berth/rollback.h"
#include "berth/atomic_file.h"
#include "berth/command.h"
#include "berth/disk_usage_cache.h"
#include "berth/refreshed_cache.h"
#include "berth/fault_point.h"
#include "berth/file_tree.h"
#include "berth/inherited_fds.h"
#include "berth/process_identity.h"
#include "berth/spawn.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

using test::read_file;
using test::TempDir;
using test::write_file;
namespace fs = std::filesystem;

TEST(AtomicFile, LeftoversOfCutWritesAreRemovedAndNothingElse) {
  TempDir dir("posix");
  ASSERT_TRUE(write_file_atomically(dir / "a.json", "new").ok());
  write_file(dir / "a.json.tmp-123-4", "half");
  write_file(dir / "b.tmp-99-0", "half");
  for (const char* keep : {"c.tmp-", "d.tmp-1", "e.tmp-1-", "f.tmp-x-1", "g.tmp-1-2-3", ".tmp-1-2", "h.json"})
    write_file(dir / keep, "keep");
  auto removed = remove_atomic_write_leftovers(dir.path());
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{dir / "a.json.tmp-123-4", dir / "b.tmp-99-0"}));
  EXPECT_EQ(read_file(dir / "a.json"), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 8);
  EXPECT_TRUE(remove_atomic_write_leftovers(dir / "missing").empty());
}

TEST(SpawnChild, ExecErrorsCarryTheirErrno) {
  Command missing;
  missing.argv = {"/nonexistent/berth-no-such-program"};
  auto r = run_command(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::not_found) << r.status().message();
  TempDir dir("posix");
  write_file(dir / "not-executable", "#!/bin/sh\n", 0644);
  Command denied;
  denied.argv = {dir / "not-executable"};
  auto d = run_command(denied);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("Permission denied"), std::string::npos) << d.status().message();
}

// The second wall behind close-on-exec: a descriptor berthd holds without the flag (one a library
// opened, or one berthd inherited) does not reach a program it starts; the stdio it gives does.
TEST(SpawnChild, AChildGetsItsStdioAndNoDescriptorOfTheParent) {
  int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 3);
  Command list;
  list.argv = {"/bin/sh", "-c", "ls /proc/$$/fd"};
  auto r = run_command(list);
  ::close(leaked);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::set<std::string> fds;
  std::istringstream in(r->out);
  for (std::string fd; in >> fd;) fds.insert(fd);
  EXPECT_EQ(fds.count(std::to_string(leaked)), 0u) << r->out;
  for (const std::string& fd : fds) EXPECT_LE(std::stoi(fd), 2) << r->out;
}

// mark_descriptors_cloexec_from marks from its first descriptor up and leaves those below;
// close_descriptors_from closes them (in a forked child, whose table is its own).
TEST(InheritedDescriptors, MarkedFromTheFirstUpAndClosedFromTheFirstUp) {
  int low = ::open("/dev/null", O_RDONLY);
  int high = ::fcntl(::open("/dev/null", O_RDONLY), F_DUPFD, 100);
  ASSERT_GE(low, 3);
  ASSERT_GE(high, 100);
  ASSERT_EQ(mark_descriptors_cloexec_from(100), 0);
  EXPECT_EQ(::fcntl(low, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_NE(::fcntl(high, F_GETFD) & FD_CLOEXEC, 0);
  pid_t child = ::fork();
  if (child == 0) {
    if (close_descriptors_from(100) != 0) _exit(10);
    if (::fcntl(high, F_GETFD) != -1 || errno != EBADF) _exit(11);
    if (::fcntl(low, F_GETFD) == -1) _exit(12);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ::close(low);
  ::close(high);
}

TEST(SpawnChild, RunsWithDefaultSignalsAndItsOwnProcessGroup) {
  // berthd ignores SIGPIPE; a child must not inherit that, and runs in a group of its own.
  signal(SIGPIPE, SIG_IGN);
  Command c;
  c.argv = {"/bin/sh", "-c", "grep -E '^SigIgn' /proc/self/status; ps -o pgid= -p $$; ps -o pid= -p $$"};
  auto r = run_command(c);
  signal(SIGPIPE, SIG_DFL);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->out.find("SigIgn:\t0000000000000000"), std::string::npos) << r->out;
  std::istringstream ids(r->out.substr(r->out.find('\n') + 1));
  long pgid = 0, pid = 0;
  ids >> pgid >> pid;
  EXPECT_EQ(pgid, pid);
}

TEST(SpawnChild, DieWithParentKillsTheChildWhenItsSpawningThreadEnds) {
  // PR_SET_PDEATHSIG follows the thread that spawned the child: the guarantee berthd relies on
  // (a runtime or plugin dies with the thread waiting for it, and so with berthd).
  pid_t pid = 0;
  std::thread([&] {
    auto p = spawn_process({.argv = {"/bin/sleep", "100"}, .die_with_parent = true});
    ASSERT_TRUE(p.ok()) << p.status().message();
    pid = *p;
  }).join();
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  auto kept = spawn_process({.argv = {"/bin/sleep", "100"}});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(waitpid(*kept, &status, WNOHANG), 0);  // without it the child lives on
  kill(*kept, SIGKILL);
  waitpid(*kept, &status, 0);
}

TEST(ProcessIdentity, StartTimeCgroupAndPidfdTellALiveProcess) {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  unsigned long long start = process_start_time(child);
  EXPECT_GT(start, 0u);
  EXPECT_EQ(process_start_time(child), start);  // stable for one process
  // The leaf of the deepest cgroup this process is in (any hierarchy), which the child shares.
  std::istringstream own(read_file("/proc/self/cgroup"));
  std::string leaf;
  for (std::string line; std::getline(own, line);)
    if (line.back() != '/' && line.substr(line.rfind('/') + 1).size() > leaf.size())
      leaf = line.substr(line.rfind('/') + 1);
  if (!leaf.empty()) {
    EXPECT_TRUE(process_in_cgroup_leaf(child, leaf)) << leaf;
  }
  EXPECT_FALSE(process_in_cgroup_leaf(child, "berth-no-such-cgroup"));
  UniqueFd fd = open_pidfd(child);
  ASSERT_TRUE(fd);
  EXPECT_TRUE(pidfd_alive(fd.get()));
  kill(child, SIGKILL);
  int status = 0;
  // A zombie is gone for all three.
  for (int i = 0; i < 200 && pidfd_alive(fd.get()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(pidfd_alive(fd.get()));
  EXPECT_EQ(process_start_time(child), 0u);
  waitpid(child, &status, 0);
  EXPECT_EQ(process_start_time(child), 0u);
  EXPECT_FALSE(open_pidfd(child));
}

TEST(ProcessIdentity, AContainerProcessIsKilledOnlyInItsOwnCgroup) {
  std::istringstream own(read_file("/proc/self/cgroup"));
  std::string leaf;
  for (std::string line; std::getline(own, line);)
    if (line.back() != '/' && line.substr(line.rfind('/') + 1).size() > leaf.size())
      leaf = line.substr(line.rfind('/') + 1);
  if (leaf.empty()) GTEST_SKIP() << "this process runs in no named cgroup";
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  // Another cgroup's name: not this container's process, so left alone.
  EXPECT_FALSE(kill_container_process(child, "berth-no-such-cgroup", std::chrono::milliseconds(200)));
  EXPECT_GT(process_start_time(child), 0u);
  EXPECT_TRUE(kill_container_process(child, leaf, std::chrono::seconds(5)));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(kill_container_process(child, leaf, std::chrono::seconds(1)));  // gone: nothing to do
}

TEST(ProcessIdentity, PidFileIsReadStrictly) {
  TempDir dir("posix");
  write_file(dir / "pid", "4242");
  EXPECT_EQ(read_pid_file(dir / "pid"), 4242);
  for (const char* bad : {"", "-1", "0", "x", "99999999999"}) {
    write_file(dir / "bad", bad);
    EXPECT_EQ(read_pid_file(dir / "bad"), 0) << bad;
  }
  EXPECT_EQ(read_pid_file(dir / "missing"), 0);
}

// A chain of `depth` directories, built as a container could (mkdir, then rename the chain under a
// new top), so no path is ever longer than PATH_MAX; each level holds one 1-block file.
void deep_tree(const std::string& root, int depth) {
  ASSERT_EQ(::mkdir((root + "/chain").c_str(), 0755), 0);
  for (int i = 0; i < depth; ++i) {
    int fd = ::open((root + "/chain/f").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "x", 1), 1);
    ::close(fd);
    ASSERT_EQ(::mkdir((root + "/up").c_str(), 0755), 0);
    ASSERT_EQ(::rename((root + "/chain").c_str(), (root + "/up/d").c_str()), 0);
    ASSERT_EQ(::rename((root + "/up").c_str(), (root + "/chain").c_str()), 0);
  }
}

TEST(FileTree, MeasuresAndRemovesAFiveThousandLevelTreeWithFewDescriptors) {
  TempDir dir("posix");
  deep_tree(dir.path(), 5000);
  // With a budget of 16 descriptors, as if the daemon were near its limit.
  struct rlimit old {};
  ::getrlimit(RLIMIT_NOFILE, &old);
  struct rlimit low = old;
  low.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  auto usage = measure_disk_usage(dir / "chain");
  Status removed = remove_tree(dir / "chain");
  ::setrlimit(RLIMIT_NOFILE, &old);
  ASSERT_TRUE(usage.ok()) << usage.status().message();
  EXPECT_EQ(usage->inodes, 10001u);  // 5 001 directories and 5 000 files
  EXPECT_GE(usage->bytes, 5000u * 4096);
  ASSERT_TRUE(removed.ok()) << removed.message();
  EXPECT_FALSE(fs::exists(dir / "chain"));
}

TEST(FileTree, RemovalNeverCrossesAMountOrFollowsASymlink) {
  TempDir dir("posix"), outside("posix");
  write_file(outside / "keep", "k");
  fs::create_directories(dir / "t/a/mnt");
  fs::create_symlink(outside.path(), dir / "t/a/link");
  write_file(dir / "t/a/file", "f");
  ASSERT_EQ(::mount("tmpfs", (dir / "t/a/mnt").c_str(), "tmpfs", 0, nullptr), 0);
  write_file(dir / "t/a/mnt/inside", "i");
  Status s = remove_tree(dir / "t");
  EXPECT_EQ(s.code(), Code::failed_precondition) << s.message();
  EXPECT_NE(s.message().find("mount point"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::exists(dir / "t/a/mnt/inside"));
  ::umount2((dir / "t/a/mnt").c_str(), MNT_DETACH);
  ASSERT_TRUE(remove_tree(dir / "t").ok());
  EXPECT_FALSE(fs::exists(dir / "t"));
  EXPECT_EQ(read_file(outside / "keep"), "k");
  EXPECT_TRUE(remove_tree(dir / "t").ok());  // gone already: fine
  // A bind mount of a dir on the same filesystem (same st_dev) is a mount point all the same.
  fs::create_directories(dir / "b/bound");
  ASSERT_EQ(::mount(outside.path().c_str(), (dir / "b/bound").c_str(), nullptr, MS_BIND, nullptr), 0);
  s = remove_tree(dir / "b");
  EXPECT_EQ(s.code(), Code::failed_precondition) << s.message();
  EXPECT_EQ(read_file(outside / "keep"), "k");
  ::umount2((dir / "b/bound").c_str(), MNT_DETACH);
  ASSERT_TRUE(remove_tree(dir / "b").ok());
  write_file(dir / "plain", "p");
  EXPECT_TRUE(remove_tree(dir / "plain").ok());
  EXPECT_FALSE(fs::exists(dir / "plain"));
}

TEST(FileTree, UsageCountsHardLinksOnceAndStaysOnItsFilesystem) {
  TempDir dir("posix");
  fs::create_directories(dir / "t/mnt");
  write_file(dir / "t/a", std::string(10000, 'x'));
  fs::create_hard_link(dir / "t/a", dir / "t/b");
  auto before = measure_disk_usage(dir / "t");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->inodes, 3u);  // t, mnt, a (= b)
  ASSERT_EQ(::mount("tmpfs", (dir / "t/mnt").c_str(), "tmpfs", 0, nullptr), 0);
  write_file(dir / "t/mnt/big", std::string(100000, 'y'));
  auto after = measure_disk_usage(dir / "t");
  ::umount2((dir / "t/mnt").c_str(), MNT_DETACH);
  ASSERT_TRUE(after.ok());
  // The mounted filesystem is not the tree's (its root shows in place of the mount point, as du -x).
  EXPECT_EQ(after->inodes, before->inodes - 1);
  EXPECT_LT(after->bytes, before->bytes + 100000);
  EXPECT_EQ(measure_disk_usage(dir / "missing").status().code(), Code::not_found);
}

// RefreshedCache: concurrent first requests for a key measure it once; a zero interval measures
// in every call and starts no thread.
TEST(RefreshedCache, FirstRequestsShareOneMeasurementAndZeroIntervalMeasuresEachCall) {
  using namespace std::chrono_literals;
  std::atomic<int> measured{0};
  auto slow = [&](const std::string& key) -> Result<int> {
    ++measured;
    std::this_thread::sleep_for(100ms);
    return static_cast<int>(key.size());
  };
  {
    RefreshedCache<int> cache({.refresh_interval = 10s}, slow);
    std::vector<std::thread> callers;
    std::atomic<int> right{0};
    for (int i = 0; i < 4; ++i)
      callers.emplace_back([&] {
        auto v = cache.get("four");
        if (v.ok() && *v == 4) ++right;
      });
    for (auto& t : callers) t.join();
    EXPECT_EQ(right, 4);
    EXPECT_EQ(measured, 1);
    EXPECT_EQ(cache.background_measurements(), 0u);
  }
  measured = 0;
  RefreshedCache<int> each({.refresh_interval = 0ms}, slow);
  EXPECT_EQ(*each.get("ab"), 2);
  EXPECT_EQ(*each.get("ab"), 2);
  EXPECT_EQ(measured, 2);
}

// Keys first asked for together are re-measured spread over the second half of the interval,
// not all at once a whole interval later (where the caller's next periodic call falls).
TEST(RefreshedCache, KeysAskedForTogetherAreRefreshedSpreadOverTheInterval) {
  using namespace std::chrono_literals;
  using Clock = std::chrono::steady_clock;
  std::mutex mu;
  std::map<std::string, std::vector<Clock::time_point>> at;
  auto record = [&](const std::string& key) -> Result<int> {
    std::lock_guard lock(mu);
    at[key].push_back(Clock::now());
    return 1;
  };
  RefreshedCache<int> cache({.refresh_interval = 2s, .forget_after = 1min}, record);
  const auto asked = Clock::now();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(cache.get("/sys/fs/cgroup/pod" + std::to_string(i) + "/ctr").ok());
  std::this_thread::sleep_for(2300ms);
  std::lock_guard lock(mu);
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  for (const auto& [key, times] : at) {
    ASSERT_GE(times.size(), 2u) << key << " was not re-measured within an interval";
    EXPECT_GE(times[1] - asked, 1s) << key << " was re-measured before half the interval";
    first = std::min(first, times[1]);
    last = std::max(last, times[1]);
  }
  EXPECT_GT(last - first, 500ms) << "the first re-measurements came in one burst";
}

// A prefetched key is measured by the refresh thread without any get(); a get() that comes while
// that measurement runs waits for it instead of measuring too. A zero interval prefetches nothing.
TEST(RefreshedCache, APrefetchedKeyIsMeasuredInTheBackground) {
  using namespace std::chrono_literals;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::thread::id> measured_by;
  bool release = false;
  auto held = [&](const std::string& key) -> Result<int> {
    std::unique_lock lock(mu);
    measured_by.push_back(std::this_thread::get_id());
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    return static_cast<int>(key.size());
  };
  RefreshedCache<int> cache({.refresh_interval = 10s}, held);
  cache.prefetch("store");
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return !measured_by.empty(); })) << "the prefetch measured nothing";
  }
  std::thread caller([&] { EXPECT_EQ(*cache.get("store"), 5); });
  const std::thread::id caller_id = caller.get_id();  // join() clears it
  std::this_thread::sleep_for(100ms);                 // the caller is in get(); it must not measure on its own
  {
    std::lock_guard lock(mu);
    release = true;
    cv.notify_all();
  }
  caller.join();
  std::lock_guard lock(mu);
  ASSERT_EQ(measured_by.size(), 1u);
  EXPECT_NE(measured_by[0], std::this_thread::get_id());
  EXPECT_NE(measured_by[0], caller_id);
  EXPECT_EQ(cache.background_measurements(), 1u);
  cache.prefetch("store");  // measured already: nothing more
  EXPECT_EQ(*cache.get("store"), 5);
  EXPECT_EQ(measured_by.size(), 1u);

  int each = 0;
  RefreshedCache<int> zero({.refresh_interval = 0ms}, [&](const std::string&) -> Result<int> { return ++each; });
  zero.prefetch("k");
  EXPECT_EQ(each, 0);
}

// Calls answer from memory; the refresh thread brings a changed tree's figure in within about an
// interval, and a tree that went is reported gone.
TEST(DiskUsageCache, AnswersFromMemoryAndRefreshesInTheBackground) {
  using namespace std::chrono_literals;
  TempDir dir("posix");
  fs::create_directories(dir / "t");
  DiskUsageCache cache({.refresh_interval = 300ms, .forget_after = 10s});
  auto first = cache.get(dir / "t");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->usage.inodes, 1u);
  for (int i = 0; i < 5; ++i) write_file(dir / ("t/f" + std::to_string(i)), "x");
  auto again = cache.get(dir / "t");  // no walk: the same figure, the same stamp
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->usage.inodes, 1u);
  EXPECT_EQ(again->measured_at_ns, first->measured_at_ns);
  uint64_t walks = cache.background_walks();
  Result<CachedDiskUsage> later = first;
  for (int i = 0; i < 100 && later->usage.inodes != 6; ++i) {
    std::this_thread::sleep_for(50ms);
    later = cache.get(dir / "t");
    ASSERT_TRUE(later.ok());
  }
  EXPECT_EQ(later->usage.inodes, 6u);
  EXPECT_GT(later->measured_at_ns, first->measured_at_ns);
  EXPECT_GT(cache.background_walks(), walks);
  ASSERT_TRUE(remove_tree(dir / "t").ok());
  Status gone = ok_status();
  for (int i = 0; i < 100 && gone.ok(); ++i) {
    std::this_thread::sleep_for(50ms);
    gone = cache.get(dir / "t").status();
  }
  EXPECT_EQ(gone.code(), Code::not_found);
  EXPECT_EQ(cache.get(dir / "missing").status().code(), Code::not_found);
}

#ifdef BERTH_FAULT_POINTS
TEST(FaultPointDeathTest, AnArmedPointKillsTheProcessAtItsNthPass) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("BERTH_FAULT_POINT", "pull_image_recorded:3", 1);
        fault_point(FaultPoint::run_pod_sandbox_checkpoint_created);  // another point: nothing
        fault_point(FaultPoint::pull_image_recorded);
        fault_point(FaultPoint::pull_image_recorded);
        write(2, "two passes survived\n", 20);
        fault_point(FaultPoint::pull_image_recorded);
        _exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "two passes survived\n.*fault point pull_image_recorded reached");
}

TEST(FaultPointDeathTest, AnUnknownNameIsReportedAndArmsNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("BERTH_FAULT_POINT", "no_such_point", 1);
        fault_point(FaultPoint::pull_image_recorded);
        _exit(3);
      },
      ::testing::ExitedWithCode(3), "names no fault point: no_such_point");
}
#endif

}  // namespace
}  // namespace berth

// berthd's own capabilities and OOM floor, parsed from copies of /proc/self/status.
TEST(OwnPrivileges, ReadsTheCapabilitySetsAndTheOomFloor) {
  std::string status =
      "Name:\tberthd\nCapInh:\t0000000000000000\nCapPrm:\t000001fffeffffff\n"
      "CapEff:\t000001fffeffffff\nCapBnd:\t000001fffeffffff\nCapAmb:\t0000000000000000\n";
  auto p = berth::parse_own_privileges(status, "-500\n");
  EXPECT_EQ(p.effective, 0x1fffeffffffull);
  EXPECT_EQ(p.bounding, 0x1fffeffffffull);
  EXPECT_FALSE(p.effective_has(24));  // CAP_SYS_RESOURCE withheld, as on this machine
  EXPECT_TRUE(p.effective_has(21));   // CAP_SYS_ADMIN
  EXPECT_EQ(p.oom_floor(), -500);
  auto full = berth::parse_own_privileges("CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n", "0");
  EXPECT_EQ(full.oom_floor(), -1000);
  auto none = berth::parse_own_privileges("Name:\tx\n", "");
  EXPECT_EQ(none.effective, 0u);
  EXPECT_EQ(none.oom_floor(), 0);
  EXPECT_EQ(berth::own_privileges().oom_score_adj,
            berth::parse_own_privileges("", berth::read_text_file("/proc/self/oom_score_adj")).oom_score_adj);
}

// Undo steps run newest first, all of them even after a failure; the first failure comes back
// named by its step, and a dismissed guard undoes nothing.
TEST(Rollback, RunsEveryStepNewestFirstAndReportsTheFirstFailureByName) {
  std::vector<std::string> ran;
  {
    berth::Rollback undo("container c1");
    undo.add("name", [&] {
      ran.push_back("name");
      return berth::Status();
    });
    undo.add("dirs", [&] {
      ran.push_back("dirs");
      return berth::Status(berth::Code::internal, "rmdir /x: EBUSY");
    });
    undo.add("rootfs", [&] {
      ran.push_back("rootfs");
      return berth::Status(berth::Code::internal, "umount /r: EBUSY");
    });
    berth::Status s = undo.run();
    EXPECT_EQ(ran, (std::vector<std::string>{"rootfs", "dirs", "name"}));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "undo step 'rootfs': umount /r: EBUSY");
    EXPECT_TRUE(undo.run().ok());  // empty now
  }
  EXPECT_EQ(ran.size(), 3u);
  {
    berth::Rollback undo("container c2");
    undo.add("name", [&] {
      ran.push_back("c2");
      return berth::Status();
    });
  }  // out of scope undismissed: undone
  EXPECT_EQ(ran.back(), "c2");
  {
    berth::Rollback undo("container c3");
    undo.add("name", [&] {
      ran.push_back("c3");
      return berth::Status();
    });
    undo.dismiss();
  }
  EXPECT_EQ(ran.back(), "c2");
}
