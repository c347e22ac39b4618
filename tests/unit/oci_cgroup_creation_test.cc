// create_cgroup on this host's real hierarchies: a v1 cpuset level that exists with no cpus or
// mems (one a concurrent create has just made) is filled in, so pods made in parallel under a new
// parent never meet ENOSPC; a parent removed while a create walks below it is made again.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "berth/cgroup_creation.h"
#include "berth/cgroup_removal.h"
#include "berth/file_text.h"

namespace berth {
namespace {

std::string cpuset_mount() {
  for (const auto& m : cgroup_hierarchy_mounts())
    if (::access((m + "/cpuset.cpus").c_str(), F_OK) == 0 && ::access((m + "/cgroup.controllers").c_str(), F_OK) != 0)
      return m;
  return "";
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Removes the test's cgroups, children first, in every hierarchy, whatever the test did.
struct CgroupsGone {
  std::vector<std::string> dirs;
  ~CgroupsGone() {
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) (void)remove_cgroup(*it, false);
  }
};

TEST(CgroupCreation, AnEmptyV1CpusetLevelIsFilledFromItsParent) {
  const std::string cpuset = cpuset_mount();
  if (cpuset.empty()) GTEST_SKIP() << "no cgroup v1 cpuset hierarchy on this host";
  const std::string parent = "/berth-unit-cpuset-" + std::to_string(::getpid());
  CgroupsGone gone{{parent, parent + "/pod"}};
  // As a concurrent create leaves it between its mkdir and its copy of cpus and mems (or as any
  // tool that made the dir without them does).
  ASSERT_EQ(::mkdir((cpuset + parent).c_str(), 0755), 0);
  if (trimmed(read_text_file(cpuset + parent + "/cpuset.cpus")).empty() == false)
    GTEST_SKIP() << "this hierarchy copies cpusets into new cgroups itself (cgroup.clone_children)";
  auto procs = create_cgroup(parent + "/pod");
  ASSERT_TRUE(procs.ok()) << procs.status().message();
  const std::string root_cpus = trimmed(read_text_file(cpuset + "/cpuset.cpus"));
  const std::string root_mems = trimmed(read_text_file(cpuset + "/cpuset.mems"));
  EXPECT_EQ(trimmed(read_text_file(cpuset + parent + "/cpuset.cpus")), root_cpus);
  EXPECT_EQ(trimmed(read_text_file(cpuset + parent + "/cpuset.mems")), root_mems);
  EXPECT_EQ(trimmed(read_text_file(cpuset + parent + "/pod/cpuset.cpus")), root_cpus);
  EXPECT_EQ(trimmed(read_text_file(cpuset + parent + "/pod/cpuset.mems")), root_mems);
  // And a process can join it (the ENOSPC the fill-in prevents).
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  bool joined = true;
  for (const auto& p : *procs) {
    FILE* f = std::fopen(p.c_str(), "we");
    joined = joined && f && std::fprintf(f, "%d", child) > 0;
    if (f) joined = std::fclose(f) == 0 && joined;
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(joined) << "a process could not join " << parent << "/pod";
}

// Ten creates at once below one new parent, as ten pods of a new QoS level start.
TEST(CgroupCreation, ParallelCreatesBelowANewParentAllTakeProcesses) {
  const std::string cpuset = cpuset_mount();
  if (cpuset.empty()) GTEST_SKIP() << "no cgroup v1 cpuset hierarchy on this host";
  const std::string parent = "/berth-unit-parallel-" + std::to_string(::getpid());
  CgroupsGone gone{{parent}};
  for (int i = 0; i < 10; ++i) gone.dirs.push_back(parent + "/p" + std::to_string(i));
  std::vector<std::string> errors(10);
  std::vector<std::thread> threads;
  for (int i = 0; i < 10; ++i)
    threads.emplace_back([&, i] {
      auto r = create_cgroup(parent + "/p" + std::to_string(i));
      if (!r.ok()) errors[i] = r.status().message();
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(errors[i], "") << "p" << i;
    EXPECT_NE(trimmed(read_text_file(cpuset + parent + "/p" + std::to_string(i) + "/cpuset.cpus")), "") << "p" << i;
  }
}

// A parent that its last user removes while a create walks below it (an empty shared parent,
// as another runtime's or another berthd's clean-up leaves it) is made again: for each of many
// creates, a thread removes the empty parent once, as soon as it can.
TEST(CgroupCreation, AParentRemovedUnderTheWalkIsMadeAgain) {
  const std::string parent = "/berth-unit-vanishing-" + std::to_string(::getpid());
  CgroupsGone gone{{parent, parent + "/pod"}};
  std::atomic<bool> stop{false}, armed{false};
  std::atomic<int> removals{0};
  std::thread remover([&] {
    while (!stop)
      if (armed)
        for (const auto& m : cgroup_hierarchy_mounts())
          if (armed && ::rmdir((m + parent).c_str()) == 0) {
            ++removals;
            armed = false;
          }
  });
  std::string error;
  for (int i = 0; i < 300 && error.empty(); ++i) {
    armed = true;
    auto r = create_cgroup(parent + "/pod");
    armed = false;
    if (!r.ok()) error = r.status().message();
    for (const auto& m : cgroup_hierarchy_mounts()) ::rmdir((m + parent + "/pod").c_str());
  }
  stop = true;
  remover.join();
  EXPECT_EQ(error, "");
  EXPECT_GT(removals.load(), 0) << "the parent was never removed under a walk: the test proved nothing";
}

// Which mount stands for each hierarchy: its root's mount on a node; inside a container without a
// cgroup namespace (the node image on a v1 host) only binds of the container's own cgroup exist,
// and pods must nest below them rather than find no hierarchy at all.
TEST(CgroupHierarchyMounts, RootMountsWinAndSubTreeBindsStandInWhenAlone) {
  const std::string node =
      "25 1 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
      "26 25 0:23 / /sys/fs/cgroup/cpu rw shared:9 - cgroup cgroup rw,cpu\n"
      "27 25 0:24 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "90 1 0:24 /kubepods/pod1/c1 /run/some/bind rw - cgroup cgroup rw,memory\n"
      "28 25 0:25 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(cgroup_hierarchy_mounts_in(node),
            (std::vector<std::string>{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified"}));

  // The sub-tree bind is mounted first and the root later: the root still wins.
  const std::string later_root =
      "90 1 0:24 /kubepods/pod1/c1 /run/some/bind rw - cgroup cgroup rw,memory\n"
      "27 25 0:24 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
  EXPECT_EQ(cgroup_hierarchy_mounts_in(later_root), (std::vector<std::string>{"/sys/fs/cgroup/memory"}));

  const std::string in_container =
      "600 500 0:70 / /sys/fs/cgroup ro - tmpfs tmpfs rw\n"
      "601 600 0:23 /berth-pods/node/ctr /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
      "602 600 0:24 /berth-pods/node/ctr /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "603 600 0:26 /berth-pods/node/ctr /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n";
  EXPECT_EQ(cgroup_hierarchy_mounts_in(in_container),
            (std::vector<std::string>{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/systemd"}));
  EXPECT_TRUE(cgroup_hierarchy_mounts_in("25 1 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n").empty());
}

}  // namespace
}  // namespace berth
