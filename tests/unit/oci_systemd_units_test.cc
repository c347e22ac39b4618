// The systemd cgroup driver's pure parts: a cgroupsPath's slice and scope, and limits as unit
// properties with runc's conversions (the D-Bus calls themselves run against systemd in the node
// guest, tests/vm/node-tests).
#include <gtest/gtest.h>

#include "berth/cgroups_path.h"
#include "berth/systemd_units.h"

namespace berth {
namespace {

const UnitProperty* find(const std::vector<UnitProperty>& props, const std::string& name) {
  for (const auto& p : props)
    if (p.name == name) return &p;
  return nullptr;
}

uint64_t number(const std::vector<UnitProperty>& props, const std::string& name) {
  const UnitProperty* p = find(props, name);
  EXPECT_NE(p, nullptr) << name;
  return p ? std::get<uint64_t>(p->value) : 0;
}

TEST(SystemdUnits, ACgroupsPathNamesItsSliceAndScope) {
  auto path = cgroups_path_for("kubepods-burstable-pod1234.slice", "abc", true);
  ASSERT_TRUE(path.ok());
  SystemdCgroup unit = systemd_cgroup_of(*path);
  EXPECT_EQ(unit.slice, "kubepods-burstable-pod1234.slice");
  EXPECT_EQ(unit.scope, "berth-abc.scope");
  EXPECT_EQ(cgroup_dir_of(*path, true),
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/berth-abc.scope");
  EXPECT_EQ(systemd_cgroup_of("system.slice::abc").scope, "abc.scope");
  EXPECT_TRUE(systemd_cgroup_of("/berth/abc").scope.empty());
}

TEST(SystemdUnits, LimitsBecomeTheV2PropertiesRuncSets) {
  CgroupLimits l;
  l.memory = 64 << 20;
  l.memory_swap = 96 << 20;
  l.cpu_shares = 1024;
  l.cpu_quota = 25000;
  l.cpu_period = 100000;
  l.cpuset_cpus = "0-2,9";
  l.cpuset_mems = "0";
  auto p = unit_properties(l, true);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(number(*p, "MemoryMax"), uint64_t(64) << 20);
  EXPECT_EQ(number(*p, "MemorySwapMax"), uint64_t(32) << 20);  // the swap alone
  EXPECT_EQ(number(*p, "CPUWeight"), 39u);                     // 1 + (1022 * 9999) / 262142
  EXPECT_EQ(number(*p, "CPUQuotaPerSecUSec"), 250000u);
  EXPECT_EQ(number(*p, "CPUQuotaPeriodUSec"), 100000u);
  ASSERT_NE(find(*p, "AllowedCPUs"), nullptr);
  EXPECT_EQ(std::get<std::vector<uint8_t>>(find(*p, "AllowedCPUs")->value), (std::vector<uint8_t>{0x07, 0x02}));
  EXPECT_EQ(std::get<std::vector<uint8_t>>(find(*p, "AllowedMemoryNodes")->value), (std::vector<uint8_t>{0x01}));
}

TEST(SystemdUnits, V1NamesAndWhatSystemdDoesNotSetThere) {
  CgroupLimits l;
  l.memory = 1 << 20;
  l.cpu_shares = 512;
  l.cpuset_cpus = "1";
  auto p = unit_properties(l, false);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(number(*p, "MemoryLimit"), uint64_t(1) << 20);
  EXPECT_EQ(number(*p, "CPUShares"), 512u);
  EXPECT_EQ(find(*p, "AllowedCPUs"), nullptr);
  EXPECT_EQ(find(*p, "MemoryMax"), nullptr);
}

TEST(SystemdUnits, AQuotaIsRoundedUpToTenMillisecondsAndUnlimitedIsInfinity) {
  CgroupLimits l;
  l.cpu_quota = 12345;  // of the default 100 ms period: 123450 us per second
  auto p = unit_properties(l, true);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(number(*p, "CPUQuotaPerSecUSec"), 130000u);
  EXPECT_EQ(find(*p, "CPUQuotaPeriodUSec"), nullptr);
  l.cpu_quota = -1;
  l.memory = -1;
  p = unit_properties(l, true);
  EXPECT_EQ(number(*p, "CPUQuotaPerSecUSec"), UINT64_MAX);
  EXPECT_EQ(number(*p, "MemoryMax"), UINT64_MAX);
  EXPECT_TRUE(unit_properties(CgroupLimits{}, true)->empty());
}

TEST(SystemdUnits, ACpusetThatDoesNotParseIsNamed) {
  for (const char* bad : {"a", "1-", "3-1", "1,,2", "99999"}) {
    auto bits = cpuset_bitmask(bad);
    ASSERT_FALSE(bits.ok()) << bad;
    EXPECT_EQ(bits.status().code(), Code::invalid_argument);
    EXPECT_NE(bits.status().message().find(std::string("'") + bad + "'"), std::string::npos) << bits.status().message();
  }
  EXPECT_EQ(*cpuset_bitmask("8"), (std::vector<uint8_t>{0x00, 0x01}));
}

}  // namespace
}  // namespace berth
