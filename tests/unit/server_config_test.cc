// Config parsing: defaults, file values, and each kind of bad config with the message it gives.
#include <gtest/gtest.h>

#include "berth/config.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

TEST(Config, DefaultsWhenNoFile) {
  Config c;
  EXPECT_EQ(c.socket, "/run/berth/berth.sock");
  EXPECT_EQ(c.root, "/var/lib/berth");
  EXPECT_EQ(c.state, "/run/berth");
  EXPECT_EQ(c.cgroup_driver, "cgroupfs");
  EXPECT_EQ(c.default_runtime, "runc");
  ASSERT_TRUE(c.runtimes.count("runc"));
  EXPECT_TRUE(validate_config(c).ok());
}

TEST(Config, FileValuesOverrideDefaults) {
  auto c = parse_config(R"(
socket = "/tmp/x.sock"
root = "/srv/berth"
log_level = "debug"
cgroup_driver = "systemd"
default_runtime = "crun"
shutdown_timeout_seconds = 3
[runtimes.crun]
path = "/usr/bin/crun"
)",
                        "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->socket, "/tmp/x.sock");
  EXPECT_EQ(c->root, "/srv/berth");
  EXPECT_EQ(c->state, "/run/berth");
  EXPECT_EQ(c->log_level, "debug");
  EXPECT_EQ(c->cgroup_driver, "systemd");
  EXPECT_EQ(c->default_runtime, "crun");
  EXPECT_EQ(c->runtimes.at("crun").path, "/usr/bin/crun");
  EXPECT_EQ(c->runtimes.at("runc").path, "runc");
  EXPECT_EQ(c->shutdown_timeout_seconds, 3);
}

TEST(Config, RuntimePathDefaultsToHandlerName) {
  auto c = parse_config("[runtimes.crun]\n", "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->runtimes.at("crun").path, "crun");
}

// host_processes: true, false, or "auto" (unset: decided from the runtime's --version), shown
// by --print-config as set.
TEST(Config, HostProcessesIsTrueFalseOrAuto) {
  auto c = parse_config(
      "[runtimes.runsc]\nhost_processes = false\n[runtimes.crun]\nhost_processes = true\n"
      "[runtimes.runc]\nhost_processes = \"auto\"\n",
      "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->runtimes.at("runsc").host_processes, false);
  EXPECT_EQ(c->runtimes.at("crun").host_processes, true);
  EXPECT_FALSE(c->runtimes.at("runc").host_processes.has_value());
  auto printed = config_to_json(*c)["runtimes"];
  EXPECT_EQ(printed["runsc"]["host_processes"], false);
  EXPECT_EQ(printed["crun"]["host_processes"], true);
  EXPECT_EQ(printed["runc"]["host_processes"], "auto");
}

// A runtime command's timeout per handler: 60 s unless set, 1..3600.
TEST(Config, RuntimeTimeoutIsPerHandler) {
  auto c = parse_config("[runtimes.runc]\n[runtimes.slow]\npath = \"runsc\"\ntimeout_seconds = 300\n", "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->runtimes.at("runc").timeout_seconds, 60);
  EXPECT_EQ(c->runtimes.at("slow").timeout_seconds, 300);
  EXPECT_EQ(config_to_json(*c)["runtimes"]["slow"]["timeout_seconds"], 300);
  auto bad = parse_config("[runtimes.runc]\ntimeout_seconds = 0\n", "t.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("runtimes.runc.timeout_seconds"), std::string::npos) << bad.status().message();
}

// default_ulimits: by resource name, soft and hard an integer or "unlimited" (-1); nofile has a
// default that a file replaces, other names are added beside it.
TEST(Config, DefaultUlimitsAreByNameWithSoftAndHard) {
  Config d;
  EXPECT_EQ(d.default_ulimits.at("nofile"), (UlimitConfig{1024, 524288}));
  auto c = parse_config(
      "[default_ulimits]\nnofile = { soft = 4096, hard = 8192 }\nmemlock = { soft = \"unlimited\", hard = -1 }\n",
      "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->default_ulimits.size(), 2u);
  EXPECT_EQ(c->default_ulimits.at("nofile"), (UlimitConfig{4096, 8192}));
  EXPECT_EQ(c->default_ulimits.at("memlock"), (UlimitConfig{-1, -1}));
  EXPECT_EQ(config_to_json(*c)["default_ulimits"]["nofile"]["hard"], 8192);
  // --print-config's text reads back to the same, naming the file.
  std::string printed = config_to_toml(*c);
  EXPECT_NE(printed.find("nofile = { soft = 4096, hard = 8192 }  # t.toml"), std::string::npos) << printed;
  auto again = parse_config(printed, "printed.toml");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->default_ulimits, c->default_ulimits);
}

struct BadCase {
  const char* toml;
  const char* expected;  // a fragment of the message
};

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, IsRefusedNamingKeyAndFile) {
  auto c = parse_config(GetParam().toml, "/etc/berth/bad.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::invalid_argument);
  EXPECT_NE(c.status().message().find("/etc/berth/bad.toml"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find(GetParam().expected), std::string::npos) << c.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConfig,
    ::testing::Values(
        BadCase{"sockt = \"/x\"\n", "unknown key 'sockt'"},
        BadCase{"[runtimes.runc]\npaht = \"runc\"\n", "unknown key 'runtimes.runc.paht'"},
        BadCase{"socket = 5\n", "key 'socket': expected a string, got an integer"},
        BadCase{"shutdown_timeout_seconds = \"10\"\n", "key 'shutdown_timeout_seconds': expected an integer"},
        BadCase{"shutdown_timeout_seconds = -1\n", "key 'shutdown_timeout_seconds': must be between 0 and 3600"},
        BadCase{"max_concurrent_rpcs = 1\n", "key 'max_concurrent_rpcs': must be between"},
        BadCase{"log_level = \"loud\"\n", "key 'log_level': must be one of"},
        BadCase{"cgroup_driver = \"cgroupv3\"\n", "key 'cgroup_driver': must be one of cgroupfs, systemd"},
        BadCase{"root = \"relative/dir\"\n", "key 'root': must be an absolute path"},
        BadCase{"image_root = \"relative/images\"\n", "key 'image_root': must be an absolute path"},
        BadCase{"default_runtime = \"kata\"\n",
                "key 'default_runtime': \"kata\" is not a configured runtime (known: runc)"},
        BadCase{"runtimes = 3\n", "key 'runtimes': expected a table"},
        BadCase{"[runtimes.crun]\npath = \"\"\n", "key 'runtimes.crun.path': must not be empty"},
        BadCase{"[runtimes.crun]\nhost_processes = \"yes\"\n",
                "key 'runtimes.crun.host_processes': expected true, false or \"auto\""},
        BadCase{"[default_ulimits]\nfiles = { soft = 1, hard = 2 }\n",
                "key 'default_ulimits.files': not a resource limit (known: as, core"},
        BadCase{"[default_ulimits]\nnofile = { soft = 10, hard = 5 }\n",
                "key 'default_ulimits.nofile.soft': must not exceed hard (5), got 10"},
        BadCase{"[default_ulimits]\nnofile = { soft = \"unlimited\", hard = 5 }\n",
                "key 'default_ulimits.nofile.soft': must not exceed hard (5), got -1"},
        BadCase{"[default_ulimits]\nnproc = { soft = 10 }\n",
                "key 'default_ulimits.nproc.hard': missing: a limit needs both soft and hard"},
        BadCase{"[default_ulimits]\nnproc = { soft = -2, hard = 5 }\n",
                "key 'default_ulimits.nproc.soft': must be -1 (unlimited) or more, got -2"},
        BadCase{"[default_ulimits]\nnproc = 5\n", "key 'default_ulimits.nproc': expected { soft = <n>, hard = <n> }"},
        BadCase{"[default_ulimits]\nnproc = { soft = 1, hard = 2, max = 3 }\n",
                "unknown key 'default_ulimits.nproc.max'"},
        BadCase{"pinned_images = [\"Not A Reference\"]\n", "key 'pinned_images': \"Not A Reference\""},
        BadCase{"tracing_endpoint = \"127.0.0.1:4318\"\n", "key 'tracing_endpoint': must be an http:// URL"},
        BadCase{"socket = \"/x\nroot=1", "line 1"}));

TEST(Config, MissingExplicitFileIsAnError) {
  auto c = load_config("/nonexistent/berth.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent/berth.toml"), std::string::npos);
}

TEST(Config, LoadsFromFile) {
  test::TempDir dir;
  test::write_file(dir / "b.toml", "log_level = \"warn\"\n");
  auto c = load_config(dir / "b.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->log_level, "warn");
  EXPECT_EQ(c->source, dir / "b.toml");
}

TEST(Config, SampleConfigInPackagingIsValidAndMatchesDefaults) {
  auto c = load_config(BERTH_SOURCE_DIR "/packaging/berth.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Config d;
  d.source = c->source;
  d.files = c->files;
  EXPECT_EQ(config_to_json(*c), config_to_json(d));
}

}  // namespace
}  // namespace berth
