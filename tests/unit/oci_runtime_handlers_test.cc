// The runtime handler table: "" is the default, an unknown handler is one error text naming the
// request field and the known handlers, each handler keeps its own binary and root, and each
// handler's features come from its own runtime (asked again only when its binary changes) and
// the host.
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
  return RuntimeHandlers(
      {{"runc", "/usr/sbin/runc", "/run/berth/runtime/runc"}, {"crun", "/usr/bin/crun", "/run/crun-root"}}, "runc",
      true);
}

TEST(RuntimeHandlers, TheEmptyNameIsTheDefault) {
  auto table = two_handlers();
  EXPECT_EQ(table.resolve(""), "runc");
  EXPECT_EQ(table.resolve("crun"), "crun");
  ASSERT_TRUE(table.find("").has_value());
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
  EXPECT_FALSE(table.find("kata").has_value());
  auto rt = table.runtime_for("kata");
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), Code::invalid_argument);
  EXPECT_EQ(rt.status().message(), "runtime_handler: unknown handler 'kata' (known: runc, crun)");
}

// A reload's table reaches every copy; a handler it drops still runs what it made but takes no
// new pod, and listed again it is configured again.
TEST(RuntimeHandlers, AReloadReachesEveryCopyAndARemovedHandlerOnlyRunsWhatItMade) {
  auto table = two_handlers();
  RuntimeHandlers copy = table;
  copy.replace({{"runc", "/usr/sbin/runc", "/run/berth/runtime/runc"}, {"kata", "kata-runtime", "/run/kata"}}, "kata");
  EXPECT_EQ(table.default_name(), "kata");
  EXPECT_EQ(table.resolve(""), "kata");
  ASSERT_EQ(table.all().size(), 2u);
  EXPECT_EQ(table.all()[1].name, "kata");
  EXPECT_TRUE(table.accepts_new("kata").ok());
  Status refused = table.accepts_new("crun");
  EXPECT_EQ(refused.code(), Code::invalid_argument);
  EXPECT_EQ(refused.message(), "runtime_handler: unknown handler 'crun' (known: runc, kata)");
  auto rt = table.runtime_for("crun");  // its pods are still stopped and removed with it
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  EXPECT_EQ(rt->root(), "/run/crun-root");
  EXPECT_EQ(table.find("crun")->binary, "/usr/bin/crun");
  copy.replace({{"crun", "/usr/local/bin/crun", "/run/crun-root"}}, "crun");
  EXPECT_TRUE(table.accepts_new("crun").ok());
  EXPECT_EQ(table.runtime_for("crun")->binary(), "/usr/local/bin/crun");
  EXPECT_FALSE(table.accepts_new("runc").ok());
  EXPECT_TRUE(table.runtime_for("runc").ok());
}

// `<runtime> features` without rro, with it, and what does not read.
TEST(RuntimeFeatures, MountOptionsFromTheFeaturesDocument) {
  auto runc11 = parse_runtime_features(R"({"ociVersionMin":"1.0.0","mountOptions":["bind","rbind","ro"]})");
  EXPECT_TRUE(runc11.answered);
  EXPECT_FALSE(runc11.has_mount_option("rro"));
  EXPECT_TRUE(runc11.has_mount_option("rbind"));
  EXPECT_TRUE(parse_runtime_features(R"({"mountOptions":["rro","ro"]})").has_mount_option("rro"));
  for (const char* bad : {"", "not json", "[]", R"({"mountOptions":"rro"})", R"({"mountOptions":[1]})",
                          R"({"linux":{"namespaces":"user"}})", R"({"linux":[]})"}) {
    auto f = parse_runtime_features(bad);
    EXPECT_FALSE(f.answered) << bad;
    EXPECT_FALSE(f.has_mount_option("rro")) << bad;
  }
}

// A runtime that lists its namespaces joins a user namespace only when "user" is among them; one
// that lists none (or has no `features`) is taken at its word as an OCI runtime.
TEST(RuntimeFeatures, UserNamespacesFromTheListedNamespaces) {
  EXPECT_TRUE(parse_runtime_features(R"({"linux":{"namespaces":["network","user"]}})").joins_user_namespace());
  EXPECT_FALSE(parse_runtime_features(R"({"linux":{"namespaces":["network","pid"]}})").joins_user_namespace());
  EXPECT_TRUE(parse_runtime_features(R"({"mountOptions":[]})").joins_user_namespace());
}

// A script standing in for a runtime: `features` prints `features` (or fails when it is empty),
// `--version` answers; each run is counted in <dir>/runs.
struct ScriptRuntime {
  test::TempDir dir;
  std::string bin = dir / "fake-runtime";

  void write(const std::string& features) {
    std::filesystem::remove(bin);  // a new inode, as a package upgrade gives
    std::string on_features =
        features.empty() ? "echo 'unknown command features' >&2; exit 1" : "echo '" + features + "'";
    std::ofstream(bin) << "#!/bin/sh\necho run >> " + (dir / "runs") + "\ncase \"$1\" in\n  features) " + on_features +
                              " ;;\n  --version) echo 'fake-runtime version 1.0' ;;\n  *) exit 1 ;;\nesac\n";
    std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  }
  int runs() const {
    std::ifstream in(dir / "runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
};

RuntimeHandlers table_of(const std::string& binary,
                         HostFeatures host = {.mount_setattr = true, .idmapped_overlay = true}) {
  return RuntimeHandlers({{"runc", binary, "/run/berth/runtime/runc"}}, "runc", false, host);
}

// A handler whose binary is not there (or cannot run) advertises nothing, whatever the host can do.
TEST(RuntimeHandlers, AHandlerWithoutItsBinaryCanDoNothing) {
  test::TempDir dir;
  std::ofstream(dir / "not-executable") << "#!/bin/sh\necho '{}'\n";
  std::ofstream(dir / "does-not-run") << "#!/bin/sh\nexit 1\n";
  std::filesystem::permissions(dir / "does-not-run", std::filesystem::perms::owner_all);
  for (const std::string& binary :
       {dir / "missing", dir / "not-executable", dir / "does-not-run", std::string("no-such-runtime-in-path")}) {
    SCOPED_TRACE(binary);
    auto table = table_of(binary);
    for (const char* handler : {"", "runc"}) {
      HandlerFeatures f = table.features(handler);
      EXPECT_FALSE(f.runtime_found);
      EXPECT_FALSE(f.recursive_read_only_mounts);
      EXPECT_FALSE(f.user_namespaces);
      EXPECT_FALSE(f.rro_option);
    }
  }
  EXPECT_FALSE(table_of(dir / "missing").features("kata").runtime_found);
}

// Asked once per binary, and again when the binary at the path is replaced; a call in between
// runs nothing.
TEST(RuntimeHandlers, FeaturesAreAskedAgainOnlyWhenTheBinaryChanges) {
  ScriptRuntime rt;
  rt.write(R"({"mountOptions":["ro"],"linux":{"namespaces":["network","user"]}})");
  auto table = table_of(rt.bin);
  HandlerFeatures f = table.features("");
  EXPECT_TRUE(f.runtime_found);
  EXPECT_FALSE(f.rro_option);  // berthd's own copy, then
  EXPECT_TRUE(f.recursive_read_only_mounts);
  EXPECT_TRUE(f.user_namespaces);
  const int runs = rt.runs();
  EXPECT_EQ(runs, 2);            // `features`, then `--version` for what the runtime is
  RuntimeHandlers copy = table;  // copies share the answers
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(table.features("runc").runtime_found);
    EXPECT_TRUE(copy.features("runc").runtime_found);
  }
  EXPECT_EQ(rt.runs(), runs);

  rt.write(R"({"mountOptions":["ro","rro"],"linux":{"namespaces":["network"]}})");
  f = table.features("runc");
  EXPECT_TRUE(f.rro_option);
  EXPECT_TRUE(f.recursive_read_only_mounts);
  EXPECT_FALSE(f.user_namespaces) << "this runtime says it cannot join a user namespace";
  EXPECT_EQ(copy.features("runc").rro_option, true);
  EXPECT_EQ(rt.runs(), 2 * runs);

  // crun 1.8 has no `features`: a runtime still (its --version answers), without rro of its own.
  rt.write("");
  f = table.features("runc");
  EXPECT_TRUE(f.runtime_found);
  EXPECT_FALSE(f.rro_option);
  EXPECT_TRUE(f.recursive_read_only_mounts);
  EXPECT_TRUE(f.user_namespaces);

  std::filesystem::remove(rt.bin);
  f = table.features("runc");
  EXPECT_FALSE(f.runtime_found);
  EXPECT_FALSE(f.recursive_read_only_mounts);
  EXPECT_FALSE(f.user_namespaces);
}

// What the host cannot do, no handler can: rro (either way) needs mount_setattr, user namespaces
// the id-mapped overlay berthd probed at start.
TEST(RuntimeHandlers, TheHostLimitsEveryHandler) {
  ScriptRuntime rt;
  rt.write(R"({"mountOptions":["rro"],"linux":{"namespaces":["user"]}})");
  HandlerFeatures f = table_of(rt.bin, {.mount_setattr = false, .idmapped_overlay = false}).features("");
  EXPECT_TRUE(f.runtime_found);
  EXPECT_TRUE(f.rro_option);
  EXPECT_FALSE(f.rro_copy);
  EXPECT_FALSE(f.recursive_read_only_mounts);
  EXPECT_FALSE(f.user_namespaces);
  f = table_of(rt.bin, {.mount_setattr = true, .idmapped_overlay = false}).features("");
  EXPECT_TRUE(f.recursive_read_only_mounts);
  EXPECT_FALSE(f.user_namespaces);
}

// runc and crun run containers as namespaced host processes; anything else, crun's Wasm and libkrun
// flavours included, is taken for a sandboxing runtime.
TEST(RuntimeFeatures, IdentityFromTheVersion) {
  EXPECT_EQ(
      runtime_identity("runc version 1.1.5+ds1\ncommit: 1.1.5+ds1-1+deb12u1\nspec: 1.0.2-dev\n", "/usr/sbin/runc"),
      "runc");
  EXPECT_EQ(runtime_identity(
                "crun version 1.8.1\ncommit: f8a0\nspec: 1.0.0\n+SYSTEMD +SELINUX +APPARMOR +CAP +SECCOMP\n", "crun"),
            "crun");
  EXPECT_EQ(runtime_identity("crun version 1.14\n+SYSTEMD +SECCOMP +WASM:wasmedge +YAJL\n", "/usr/bin/crun"), "");
  EXPECT_EQ(runtime_identity("crun version 1.14\n+SYSTEMD +LIBKRUN +YAJL\n", "/usr/bin/crun"), "");
  EXPECT_EQ(runtime_identity("crun version 1.14\n+SYSTEMD\n", "/usr/bin/krun"), "");
  EXPECT_EQ(runtime_identity("runsc version release-20240212.0\nspec: 1.1.0-rc.1\n", "/usr/bin/runsc"), "");
  EXPECT_EQ(runtime_identity("kata-runtime  : 3.2.0\n", "kata-runtime"), "");
  EXPECT_EQ(runtime_identity("", "runc"), "");
}

// A handler's exec and pause shortcuts: its runtime's identity decides, unless the operator did.
TEST(RuntimeHandlers, HostProcessesFollowTheIdentityUnlessConfigured) {
  test::TempDir dir;
  auto script = [&](const std::string& name, const std::string& version) {
    std::string bin = dir / name;
    std::ofstream(bin) << "#!/bin/sh\n[ \"$1\" = --version ] && { echo '" + version + "'; exit 0; }\nexit 1\n";
    std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
    return bin;
  };
  std::string runc = script("runc", "runc version 1.1.5"), runsc = script("runsc", "runsc version release-20240212.0");
  RuntimeHandlers table({{"runc", runc, "/r1"},
                         {"runsc", runsc, "/r2"},
                         {"trusted", runsc, "/r3", true},
                         {"kept-out", runc, "/r4", false}},
                        "runc", false);
  EXPECT_TRUE(table.features("runc").host_processes);
  EXPECT_FALSE(table.features("runsc").host_processes);
  EXPECT_TRUE(table.features("trusted").host_processes);
  EXPECT_FALSE(table.features("kept-out").host_processes);
  EXPECT_FALSE(table_of(dir / "missing").features("").host_processes);
}

// A bare name (the default config's "runc") is looked up in PATH.
TEST(RuntimeHandlers, ABareNameIsLookedUpInPath) {
  ScriptRuntime rt;
  rt.write(R"({"mountOptions":["rro"]})");
  std::string path = getenv("PATH") ? getenv("PATH") : "";
  setenv("PATH", (rt.dir.path() + ":" + path).c_str(), 1);
  HandlerFeatures f = table_of("fake-runtime").features("");
  setenv("PATH", path.c_str(), 1);
  EXPECT_TRUE(f.runtime_found);
  EXPECT_TRUE(f.rro_option);
}

}  // namespace
}  // namespace berth
