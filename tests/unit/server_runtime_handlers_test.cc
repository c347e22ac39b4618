// The handler table berthd builds from its configuration: every [runtimes.<name>] with its path,
// its own root (or one under <state>/runtime), the default handler, the cgroup driver and the
// host's facts, which reach each handler's features.
#include <gtest/gtest.h>

#include "../../server/runtime_handlers_config.h"

namespace berth {
namespace {

TEST(RuntimeHandlersFromConfig, EachConfiguredHandlerWithItsBinaryAndRoot) {
  Config config;
  config.state = "/run/b";
  config.runtimes = {{"runc", {"runc", ""}}, {"crun", {"/usr/bin/crun", "/run/crun-root"}}};
  config.default_runtime = "crun";
  config.cgroup_driver = "systemd";
  auto table = runtime_handlers_from_config(config, {.mount_setattr = true, .idmapped_overlay = false});
  ASSERT_EQ(table.all().size(), 2u);
  EXPECT_EQ(table.default_name(), "crun");
  EXPECT_TRUE(table.systemd_cgroup());
  EXPECT_TRUE(table.host().mount_setattr);
  EXPECT_FALSE(table.host().idmapped_overlay);
  ASSERT_TRUE(table.find("runc").has_value());
  EXPECT_EQ(table.find("runc")->binary, "runc");
  EXPECT_EQ(table.find("runc")->root, "/run/b/runtime/runc");
  ASSERT_TRUE(table.find("").has_value());
  EXPECT_EQ(table.find("")->name, "crun");
  EXPECT_EQ(table.find("")->root, "/run/crun-root");

  config.cgroup_driver = "cgroupfs";
  EXPECT_FALSE(runtime_handlers_from_config(config, {}).systemd_cgroup());
}

// A handler whose binary is not there advertises nothing, even on a host that can do everything.
TEST(RuntimeHandlersFromConfig, AMissingBinaryAdvertisesNoFeature) {
  Config config;
  config.runtimes = {{"gone", {"/nonexistent/berth-test-runtime", ""}}};
  config.default_runtime = "gone";
  HandlerFeatures f =
      runtime_handlers_from_config(config, {.mount_setattr = true, .idmapped_overlay = true}).features("gone");
  EXPECT_FALSE(f.runtime_found);
  EXPECT_FALSE(f.recursive_read_only_mounts);
  EXPECT_FALSE(f.user_namespaces);
}

}  // namespace
}  // namespace berth
