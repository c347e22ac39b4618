// ConfigReloader (SIGHUP): which keys a reload applies, that it applies them (log level, CNI dirs,
// metrics address), that restart-only keys are logged and kept, and that an invalid configuration
// changes nothing. The daemon-level effects (a registry mirror, the log file) are in e2e_daemon_config.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>

#include "../../server/config_reload.h"
#include "../../server/runtime_handlers_config.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

// Captures what spdlog's default logger prints during a test, and puts the old logger back.
class LogCapture {
 public:
  LogCapture() : old_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    auto logger = std::make_shared<spdlog::logger>("reload-test", sink);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(old_); }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> old_;
};

TEST(ConfigChanges, LiveAndRestartKeys) {
  Config a, b;
  b.log_level = "debug";
  b.registries["r.example"].mirrors = {"http://127.0.0.1:5000"};
  b.cni_conf_dir = "/etc/cni/other";
  b.streaming_idle_timeout_seconds = 60;
  b.metrics_address = "127.0.0.1:0";
  b.max_concurrent_rpcs = 32;
  b.root = "/srv/berth";
  b.runtimes["crun"] = {"crun", ""};
  b.cgroup_driver = "systemd";
  b.default_ulimits["nproc"] = {100, 200};
  b.source = "/elsewhere.toml";
  b.files = {"/elsewhere.toml"};
  std::map<std::string, bool> got;
  for (const auto& c : config_changes(a, b)) got[c.key] = c.live;
  std::map<std::string, bool> want{{"log_level", true},       {"registries", true},
                                   {"cni_conf_dir", true},    {"streaming_idle_timeout_seconds", true},
                                   {"metrics_address", true}, {"max_concurrent_rpcs", false},
                                   {"root", false},           {"runtimes", true},
                                   {"cgroup_driver", false},  {"default_ulimits", true}};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(config_changes(a, a).empty());
}

struct ReloadRig {
  Config start;
  Result<Config> next = Config{};
  std::vector<std::string> metrics_calls;
  Status metrics_result;
  ConfigReloader reloader{start, [this] { return next; }, {.metrics_address = [this](const std::string& a) {
                            metrics_calls.push_back(a);
                            return metrics_result;
                          }}};
};

TEST(ConfigReload, AppliesLogLevelAndKeepsRestartKeys) {
  LogCapture log;
  ReloadRig rig;
  Config next = rig.start;
  next.log_level = "debug";
  next.root = "/srv/berth";
  next.files = {"/etc/berth/berth.toml", "/etc/berth/berth.toml.d/10-root.toml"};
  next.origins["root"] = "/etc/berth/berth.toml.d/10-root.toml";
  rig.next = next;
  ASSERT_TRUE(rig.reloader.reload().ok());
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::debug);
  Config running = rig.reloader.running();
  EXPECT_EQ(running.log_level, "debug");
  EXPECT_EQ(running.root, "/var/lib/berth");  // needs a restart: the running value stays
  EXPECT_EQ(running.files, next.files);
  EXPECT_NE(log.text().find("key root changed; it takes effect at the next restart (set in "
                            "/etc/berth/berth.toml.d/10-root.toml)"),
            std::string::npos)
      << log.text();
  EXPECT_NE(log.text().find("applied log_level"), std::string::npos) << log.text();
}

TEST(ConfigReload, InvalidConfigurationChangesNothing) {
  LogCapture log;
  ReloadRig rig;
  Config first = rig.start;
  first.log_level = "warn";
  first.metrics_address = "127.0.0.1:0";
  rig.next = first;
  ASSERT_TRUE(rig.reloader.reload().ok());
  rig.next = invalid_argument("config /etc/berth/berth.toml.d/20-bad.toml: key 'log_level': must be one of ...");
  Status s = rig.reloader.reload();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(rig.reloader.running().log_level, "warn");
  EXPECT_EQ(rig.reloader.running().metrics_address, "127.0.0.1:0");
  EXPECT_EQ(rig.metrics_calls, std::vector<std::string>{"127.0.0.1:0"});
  EXPECT_NE(log.text().find("reload refused, keeping the running configuration: config "
                            "/etc/berth/berth.toml.d/20-bad.toml: key 'log_level'"),
            std::string::npos)
      << log.text();
}

TEST(ConfigReload, AMetricsAddressThatCannotBeBoundKeepsTheOldOne) {
  LogCapture log;
  ReloadRig rig;
  Config next = rig.start;
  next.metrics_address = "203.0.113.1:9464";
  rig.next = next;
  rig.metrics_result = Status(Code::unavailable, "bind: cannot assign requested address");
  EXPECT_TRUE(rig.reloader.reload().ok());
  EXPECT_EQ(rig.reloader.running().metrics_address, "");
  EXPECT_NE(log.text().find("key 'metrics_address': bind: cannot assign requested address"), std::string::npos)
      << log.text();
}

// Handlers added, changed and removed reach every copy of the table; a handler's root waits for a
// restart, its other settings do not.
TEST(ConfigReload, RuntimeHandlersChangeLiveButNotTheirRoot) {
  LogCapture log;
  Config start;
  start.state = "/run/b";
  start.runtimes["old"] = {"old-runtime", ""};
  RuntimeHandlers table = runtime_handlers_from_config(start, {});
  RuntimeHandlers held_by_a_manager = table;
  Config next = start;
  next.runtimes.erase("old");
  next.runtimes["vendor"] = {"/opt/vendor/runtime", ""};
  next.runtimes["runc"].root = "/elsewhere";
  next.runtimes["runc"].timeout_seconds = 5;
  next.default_runtime = "vendor";
  ConfigReloader reloader(start, [&] { return Result<Config>(next); }, {.runtimes = &table});
  ASSERT_TRUE(reloader.reload().ok());
  EXPECT_EQ(held_by_a_manager.default_name(), "vendor");
  EXPECT_TRUE(held_by_a_manager.accepts_new("vendor").ok());
  EXPECT_EQ(held_by_a_manager.runtime_for("vendor")->root(), "/run/b/runtime/vendor");
  EXPECT_FALSE(held_by_a_manager.accepts_new("old").ok());
  EXPECT_EQ(held_by_a_manager.runtime_for("old")->binary(), "old-runtime");
  EXPECT_EQ(held_by_a_manager.runtime_for("runc")->root(), "/run/b/runtime/runc");  // the running one
  EXPECT_EQ(held_by_a_manager.runtime_for("runc")->timeout(), std::chrono::seconds(5));
  Config running = reloader.running();
  EXPECT_EQ(running.default_runtime, "vendor");
  EXPECT_EQ(running.runtimes.count("old"), 0u);
  EXPECT_EQ(running.runtimes.at("runc").root, "");
  EXPECT_NE(log.text().find("key runtimes.runc.root changed; it takes effect at the next restart"), std::string::npos)
      << log.text();
  EXPECT_NE(log.text().find("runtime handler old removed"), std::string::npos) << log.text();
  EXPECT_NE(log.text().find("applied default_runtime, runtimes"), std::string::npos) << log.text();
}

TEST(ConfigReload, SwitchesTheCniDirs) {
  LogCapture log;
  test::TempDir dir;
  CniManager cni(
      {.conf_dir = dir / "conf-a", .plugin_dirs = {dir / "bin-a"}, .cache_dir = dir / "cache", .watch_conf_dir = true});
  Config start;
  start.cni_conf_dir = dir / "conf-a";
  start.cni_plugin_dirs = {dir / "bin-a"};
  Config next = start;
  next.cni_conf_dir = dir / "conf-b";
  next.cni_plugin_dirs = {dir / "bin-b"};
  ConfigReloader reloader(start, [&] { return Result<Config>(next); }, {.cni = &cni});
  EXPECT_NE(cni.readiness().message.find(dir / "conf-a"), std::string::npos);
  ASSERT_TRUE(reloader.reload().ok());
  EXPECT_NE(cni.readiness().message.find(dir / "conf-b"), std::string::npos) << cni.readiness().message;
  EXPECT_EQ(cni.options().plugin_dirs, std::vector<std::string>{dir / "bin-b"});
  // The new dir is the one watched now: a network written there is picked up without a reload.
  test::write_file(dir / "conf-b/10-net.conflist",
                   R"({"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "bridge"}]})");
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    seen = cni.readiness().network_name == "n";
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(seen) << cni.readiness().message;
}

}  // namespace
}  // namespace berth
