// The runtime handler table: "" is the default, an unknown handler is one error text naming the
// request field and the known handlers, and each handler keeps its own binary and root.
#include <gtest/gtest.h>

#include "berth/runtime_handlers.h"

namespace berth {
namespace {

RuntimeHandlers two_handlers() {
  return RuntimeHandlers({{"runc", "/usr/sbin/runc", "/run/berth/runtime/runc"}, {"crun", "/usr/bin/crun", "/run/crun-root"}},
                         "runc", true);
}

TEST(RuntimeHandlers, TheEmptyNameIsTheDefault) {
  auto table = two_handlers();
  EXPECT_EQ(table.resolve(""), "runc");
  EXPECT_EQ(table.resolve("crun"), "crun");
  ASSERT_NE(table.find(""), nullptr);
  EXPECT_EQ(table.find("")->binary, "/usr/sbin/runc");
  auto rt = table.runtime_for("");
  ASSERT_TRUE(rt.ok());
  EXPECT_EQ(rt->binary(), "/usr/sbin/runc");
  EXPECT_EQ(rt->root(), "/run/berth/runtime/runc");
  EXPECT_TRUE(rt->systemd_cgroup());
}

TEST(RuntimeHandlers, EachHandlerHasItsOwnBinaryAndRoot) {
  auto rt = two_handlers().runtime_for("crun");
  ASSERT_TRUE(rt.ok());
  EXPECT_EQ(rt->binary(), "/usr/bin/crun");
  EXPECT_EQ(rt->root(), "/run/crun-root");
}

TEST(RuntimeHandlers, AnUnknownHandlerNamesTheFieldAndTheKnownOnes) {
  auto table = two_handlers();
  EXPECT_EQ(table.find("kata"), nullptr);
  auto rt = table.runtime_for("kata");
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), Code::invalid_argument);
  EXPECT_EQ(rt.status().message(), "runtime_handler: unknown handler 'kata' (known: runc, crun)");
}

}  // namespace
}  // namespace berth
