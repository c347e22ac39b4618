// The runtime handler table: "" is the default, an unknown handler is one error text naming the
// request field and the known handlers, and each handler keeps its own binary and root.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "berth/runtime_features.h"
#include "berth/runtime_handlers.h"
#include "berth/test/temp_dir.h"

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

// `<runtime> features` without rro, with it, and what does not read.
TEST(RuntimeFeatures, MountOptionsFromTheFeaturesDocument) {
  auto runc11 = parse_runtime_features(R"({"ociVersionMin":"1.0.0","mountOptions":["bind","rbind","ro"]})");
  EXPECT_TRUE(runc11.answered);
  EXPECT_FALSE(runc11.has_mount_option("rro"));
  EXPECT_TRUE(runc11.has_mount_option("rbind"));
  EXPECT_TRUE(parse_runtime_features(R"({"mountOptions":["rro","ro"]})").has_mount_option("rro"));
  for (const char* bad : {"", "not json", "[]", R"({"mountOptions":"rro"})", R"({"mountOptions":[1]})"}) {
    auto f = parse_runtime_features(bad);
    EXPECT_FALSE(f.answered) << bad;
    EXPECT_FALSE(f.has_mount_option("rro")) << bad;
  }
}

// Asked once per binary, and again when the binary at the path is replaced.
TEST(RuntimeFeatures, AskedAgainWhenTheBinaryChanges) {
  test::TempDir dir;
  const std::string bin = dir / "fake-runtime";
  auto write = [&](const std::string& options) {
    std::filesystem::remove(bin);  // a new inode, as a package upgrade gives
    std::ofstream(bin) << "#!/bin/sh\necho '{\"mountOptions\":[" + options + "]}'\n";
    std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  };
  write("\"ro\"");
  EXPECT_FALSE(runtime_features(bin).has_mount_option("rro"));
  write("\"ro\",\"rro\"");
  EXPECT_TRUE(runtime_features(bin).has_mount_option("rro"));
  EXPECT_FALSE(runtime_features(dir / "missing").answered);
  // A bare name (the default config's "runc") is looked up in PATH.
  std::string path = getenv("PATH") ? getenv("PATH") : "";
  setenv("PATH", (dir.path() + ":" + path).c_str(), 1);
  EXPECT_TRUE(runtime_features("fake-runtime").has_mount_option("rro"));
  setenv("PATH", path.c_str(), 1);
}

}  // namespace
}  // namespace berth
