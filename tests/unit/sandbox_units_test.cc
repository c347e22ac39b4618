// Cgroup paths for both drivers and the pause spec's namespace choices, without running anything.
#include <gtest/gtest.h>

#include "../../sandbox/pause_spec.h"
#include "berth/cgroups_path.h"

namespace berth {
namespace {

namespace v1 = runtime::v1;

TEST(SandboxCgroups, CgroupfsAndSystemdForms) {
  EXPECT_EQ(*cgroups_path_for("/kubepods/besteffort/pod1", "abc", false), "/kubepods/besteffort/pod1/abc");
  EXPECT_EQ(*cgroups_path_for("", "abc", false), "/berth/abc");
  EXPECT_EQ(*cgroups_path_for("/", "abc", false), "/abc");
  EXPECT_EQ(*cgroups_path_for("kubepods-besteffort-pod1.slice", "abc", true), "kubepods-besteffort-pod1.slice:berth:abc");
  EXPECT_EQ(*cgroups_path_for("", "abc", true), "system.slice:berth:abc");
  auto bad = cgroups_path_for("/kubepods/pod1", "abc", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a systemd slice"), std::string::npos);
  EXPECT_FALSE(cgroups_path_for("kubepods.slice", "abc", false).ok());
  EXPECT_FALSE(cgroups_path_for("/a/../b", "abc", false).ok());
}

TEST(PauseSpec, NamespacesFollowTheOptions) {
  v1::PodSandboxConfig c;
  c.set_hostname("h");
  auto spec = build_pause_spec(c, {.rootfs = "/r", .netns_path = "/run/netns/x", .cgroups_path = "/p/x"});
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  std::set<std::string> types;
  for (const auto& n : (*spec)["linux"]["namespaces"]) types.insert(n["type"].get<std::string>());
  EXPECT_EQ(types, (std::set<std::string>{"mount", "pid", "ipc", "uts", "network"}));
  EXPECT_EQ((*spec)["hostname"], "h");
  EXPECT_EQ((*spec)["root"]["readonly"], true);
  EXPECT_TRUE((*spec)["process"]["capabilities"]["effective"].empty());
  EXPECT_FALSE((*spec)["linux"].contains("seccomp"));  // no profile asked for: unconfined
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(v1::NODE);
  spec = build_pause_spec(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->contains("hostname"));
  for (const auto& n : (*spec)["linux"]["namespaces"]) EXPECT_NE(n["type"], "network");
}

TEST(PauseSpec, OverheadAddsToThePodsResourcesButInventsNoLimit) {
  v1::PodSandboxConfig c;
  auto* o = c.mutable_linux()->mutable_overhead();
  o->set_memory_limit_in_bytes(16 << 20);
  o->set_cpu_quota(10000);
  o->set_cpu_shares(100);
  o->set_cpu_period(100000);
  auto spec = build_pause_spec(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  ASSERT_TRUE(spec.ok());
  const auto& res = (*spec)["linux"]["resources"];
  EXPECT_FALSE(res.contains("memory"));  // the pod is unlimited: so is it with its overhead
  EXPECT_FALSE(res["cpu"].contains("quota"));
  EXPECT_EQ(res["cpu"]["shares"], 100);
  EXPECT_EQ(res["cpu"]["period"], 100000);
  auto* r = c.mutable_linux()->mutable_resources();
  r->set_memory_limit_in_bytes(64 << 20);
  r->set_cpu_quota(50000);
  r->set_cpu_shares(512);
  spec = build_pause_spec(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  ASSERT_TRUE(spec.ok());
  const auto& both = (*spec)["linux"]["resources"];
  EXPECT_EQ(both["memory"]["limit"], 80 << 20);
  EXPECT_EQ(both["cpu"]["quota"], 60000);
  EXPECT_EQ(both["cpu"]["shares"], 612);
}

}  // namespace
}  // namespace berth
