// MemoryHeadroom on cgroup files written by the test (v1 and v2 layouts): the working set leaves
// out page cache but not shared memory, the lowest limit on the way up counts, and a call is
// admitted only with its cost and the reserve within the limit, once what can be shed is.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "berth/test/temp_dir.h"
#include "../../server/memory_headroom.h"

namespace berth {
namespace {

using test::TempDir;
using test::write_file;
constexpr uint64_t MiB = 1 << 20;

TEST(MemoryHeadroom, V1WorkingSetLeavesOutPageCache) {
  TempDir dir;
  write_file(dir / "memory.usage_in_bytes", std::to_string(60 * MiB) + "\n");
  write_file(dir / "memory.stat", "cache 1\nrss 2\nshmem 0\nhierarchical_memory_limit " + std::to_string(64 * MiB) +
                                      "\nhierarchical_memsw_limit 9223372036854771712\ntotal_cache " +
                                      std::to_string(46 * MiB) + "\ntotal_rss 5\ntotal_shmem " +
                                      std::to_string(1 * MiB) + "\n");
  MemoryHeadroom m(dir.path(), "/", false);
  auto r = m.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->working_set, 15 * MiB);
  EXPECT_EQ(r->limit, 64 * MiB);
  // 15 + 16 + 8 (the reserve) fits in 64; 15 + 16 + 16 + 8 does not.
  auto first = m.enter("StartContainer", MemoryHeadroom::kStartCost, std::chrono::milliseconds(0));
  ASSERT_TRUE(first.ok());
  auto second = m.enter("StartContainer", MemoryHeadroom::kStartCost, std::chrono::milliseconds(0));
  ASSERT_TRUE(second.ok());
  auto third = m.enter("StartContainer", MemoryHeadroom::kStartCost, std::chrono::milliseconds(0));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), Code::resource_exhausted);
  EXPECT_NE(third.status().message().find(dir.path()), std::string::npos) << third.status().message();
  { auto gone = std::move(*first); }
  EXPECT_TRUE(m.enter("StartContainer", MemoryHeadroom::kStartCost, std::chrono::milliseconds(100)).ok());
}

TEST(MemoryHeadroom, V1WithoutALimitAdmitsEverything) {
  TempDir dir;
  write_file(dir / "memory.usage_in_bytes", "1000\n");
  write_file(dir / "memory.stat", "hierarchical_memory_limit 9223372036854771712\ntotal_cache 0\n");
  MemoryHeadroom m(dir.path(), "/", false);
  EXPECT_FALSE(m.read());
  EXPECT_TRUE(m.enter("PullImage", MemoryHeadroom::kPullCost, std::chrono::milliseconds(0)).ok());
}

TEST(MemoryHeadroom, V2TakesTheLowestLimitOnTheWayUp) {
  TempDir root;
  std::string slice = root / "system.slice", unit = slice + "/berthd.service";
  std::filesystem::create_directories(unit);
  write_file(slice + "/memory.max", std::to_string(48 * MiB) + "\n");
  write_file(unit + "/memory.max", "max\n");
  write_file(unit + "/memory.current", std::to_string(40 * MiB) + "\n");
  write_file(unit + "/memory.stat",
             "anon 1\nfile " + std::to_string(30 * MiB) + "\nshmem " + std::to_string(2 * MiB) + "\n");
  MemoryHeadroom m(unit, root.path(), true);
  auto r = m.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->working_set, 12 * MiB);
  EXPECT_EQ(r->limit, 48 * MiB);
}

// Short of room, what berthd keeps only to go faster is let go before a call waits or is refused:
// the shed runs once, and the cgroup is read again after it.
TEST(MemoryHeadroom, ShortOfRoomItShedsFirstAndReadsAgain) {
  TempDir dir;
  write_file(dir / "memory.current", std::to_string(50 * MiB) + "\n");
  write_file(dir / "memory.max", std::to_string(64 * MiB) + "\n");
  write_file(dir / "memory.stat", "anon 1\nfile 0\nshmem 0\n");
  MemoryHeadroom m(dir.path(), "/", true);
  int shed = 0;
  m.set_shed([&] {
    ++shed;
    write_file(dir / "memory.current", std::to_string(30 * MiB) + "\n");  // idle helpers gone
  });
  // 50 + 16 + 8 is over 64; after the shed, 30 + 16 + 8 is not.
  EXPECT_TRUE(m.enter("PullImage", MemoryHeadroom::kPullCost, std::chrono::milliseconds(0)).ok());
  EXPECT_EQ(shed, 1);
  // A shed that frees nothing: refused all the same, after one shed.
  write_file(dir / "memory.current", std::to_string(60 * MiB) + "\n");
  m.set_shed([&] { ++shed; });
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // past the reading it keeps for 50 ms
  auto refused = m.enter("PullImage", MemoryHeadroom::kPullCost, std::chrono::milliseconds(0));
  EXPECT_EQ(refused.status().code(), Code::resource_exhausted);
  EXPECT_EQ(shed, 2);
}

}  // namespace
}  // namespace berth
