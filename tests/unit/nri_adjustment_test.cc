// NRI adjustments merged over plugins (berth/nri_adjustment.h): per-field owners, conflicts named
// with both plugins and nothing of a refused adjustment kept, removals, hooks that only add, and
// resource updates merged the same way.
#include <gtest/gtest.h>

#include "berth/nri_adjustment.h"

namespace berth::nri {
namespace {

api::ContainerAdjustment env_adjust(std::initializer_list<std::pair<const char*, const char*>> kvs) {
  api::ContainerAdjustment a;
  for (const auto& [k, v] : kvs) {
    auto* e = a.add_env();
    e->set_key(k);
    e->set_value(v);
  }
  return a;
}

api::Container container_with_env(std::initializer_list<const char*> env) {
  api::Container c;
  c.set_id("c1");
  for (const char* e : env) c.add_env(e);
  return c;
}

TEST(NriAdjustment, PluginsOnDifferentKeysMergeAndEachSeesTheOnesBefore) {
  AdjustmentMerger m(container_with_env({"PATH=/bin"}));
  ASSERT_TRUE(m.add("10-a", env_adjust({{"A", "1"}})).ok());
  EXPECT_EQ(m.container().env_size(), 2);
  EXPECT_EQ(m.container().env(1), "A=1");
  ASSERT_TRUE(m.add("20-b", env_adjust({{"B", "2"}, {"PATH", "/usr/bin"}})).ok());
  EXPECT_EQ(m.merged().env_size(), 3);
  std::vector<std::string> env(m.container().env().begin(), m.container().env().end());
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/usr/bin", "A=1", "B=2"}));
  EXPECT_EQ(m.owners().at("environment variable PATH"), "20-b");
}

TEST(NriAdjustment, ASecondPluginOnOneFieldIsRefusedNamingBothAndKeepsNothing) {
  AdjustmentMerger m(container_with_env({}));
  ASSERT_TRUE(m.add("10-a", env_adjust({{"X", "a"}})).ok());
  auto b = env_adjust({{"Y", "b"}, {"X", "b"}});
  (*b.mutable_annotations())["from-b"] = "1";
  Status s = m.add("20-b", b);
  EXPECT_EQ(s.code(), Code::failed_precondition);
  EXPECT_EQ(s.message(), "nri: plugins \"10-a\" and \"20-b\" both tried to set environment variable X");
  // Nothing of 20-b's: not Y (set before the conflict), not its annotation.
  EXPECT_EQ(m.merged().env_size(), 1);
  EXPECT_EQ(m.container().env_size(), 1);
  EXPECT_TRUE(m.merged().annotations().empty());
  EXPECT_EQ(m.owners().count("environment variable Y"), 0u);
  // The same plugin may set its own field again.
  EXPECT_TRUE(m.add("10-a", env_adjust({{"X", "again"}})).ok());
  EXPECT_EQ(m.container().env(0), "X=again");
}

TEST(NriAdjustment, ARemovalTakesTheKeyAndOwnsIt) {
  api::Container c = container_with_env({"SECRET=1", "KEEP=2"});
  auto* mount = c.add_mounts();
  mount->set_destination("/data");
  AdjustmentMerger m(c);
  api::ContainerAdjustment a = env_adjust({{"-SECRET", ""}});
  a.add_mounts()->set_destination("-/data");
  ASSERT_TRUE(m.add("10-a", a).ok());
  ASSERT_EQ(m.container().env_size(), 1);
  EXPECT_EQ(m.container().env(0), "KEEP=2");
  EXPECT_EQ(m.container().mounts_size(), 0);
  EXPECT_EQ(m.merged().env(0).key(), "-SECRET");  // applied to the spec as a removal
  Status s = m.add("20-b", env_adjust({{"SECRET", "back"}}));
  EXPECT_EQ(s.code(), Code::failed_precondition);
  EXPECT_NE(s.message().find("\"10-a\" and \"20-b\""), std::string::npos);
}

TEST(NriAdjustment, HooksOnlyAddAndNeverConflict) {
  AdjustmentMerger m(api::Container{});
  api::ContainerAdjustment a;
  a.mutable_hooks()->add_prestart()->set_path("/bin/a");
  api::ContainerAdjustment b;
  b.mutable_hooks()->add_prestart()->set_path("/bin/b");
  ASSERT_TRUE(m.add("10-a", a).ok());
  ASSERT_TRUE(m.add("20-b", b).ok());
  ASSERT_EQ(m.merged().hooks().prestart_size(), 2);
  EXPECT_EQ(m.merged().hooks().prestart(1).path(), "/bin/b");
}

TEST(NriAdjustment, ResourcesAreOwnedFieldByField) {
  AdjustmentMerger m(api::Container{});
  api::ContainerAdjustment a;
  a.mutable_linux()->mutable_resources()->mutable_cpu()->set_cpus("0-1");
  api::ContainerAdjustment b;
  b.mutable_linux()->mutable_resources()->mutable_memory()->mutable_limit()->set_value(64 << 20);
  ASSERT_TRUE(m.add("10-cpu", a).ok());
  ASSERT_TRUE(m.add("20-mem", b).ok());
  const auto& r = m.merged().linux().resources();
  EXPECT_EQ(r.cpu().cpus(), "0-1");
  EXPECT_EQ(r.memory().limit().value(), 64 << 20);
  // Nothing set is marked present (an absent field must stay absent in the spec).
  EXPECT_FALSE(r.memory().has_swap());
  EXPECT_FALSE(r.has_blockio_class());
  EXPECT_FALSE(r.cpu().has_shares());
  api::ContainerAdjustment c;
  c.mutable_linux()->mutable_resources()->mutable_memory()->mutable_limit()->set_value(32 << 20);
  Status s = m.add("30-other", c);
  EXPECT_EQ(s.message(), "nri: plugins \"20-mem\" and \"30-other\" both tried to set memory limit");
  EXPECT_EQ(m.merged().linux().resources().memory().limit().value(), 64 << 20);
}

TEST(NriAdjustment, UpdatesOfOneContainerFromTwoPluginsShareOwners) {
  std::map<std::string, std::string> owners;
  api::LinuxResources into, a, b;
  a.mutable_cpu()->set_cpus("1");
  b.mutable_cpu()->set_cpus("2");
  b.mutable_memory()->mutable_limit()->set_value(1 << 30);
  ASSERT_TRUE(merge_resources("10-a", "c9", a, into, owners).ok());
  Status s = merge_resources("20-b", "c9", b, into, owners);
  EXPECT_EQ(s.message(), "nri: plugins \"10-a\" and \"20-b\" both tried to set container c9: CPU set cpus");
  EXPECT_FALSE(into.memory().has_limit());  // all or nothing
  EXPECT_EQ(into.cpu().cpus(), "1");
}

}  // namespace
}  // namespace berth::nri
