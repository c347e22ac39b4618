// berthd as a process: Version, Status (runtime present and missing), RuntimeConfig, an
// unimplemented rpc, socket mode, a second instance refused, SIGTERM shutdown, stale sockets.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "berth/test/daemon_process.h"

namespace berth::test {
namespace {

namespace v1 = runtime::v1;

const v1::RuntimeCondition* condition(const v1::StatusResponse& r, const std::string& type) {
  for (const auto& c : r.status().conditions())
    if (c.type() == type) return &c;
  return nullptr;
}

TEST(Daemon, VersionAnswersBerth) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  grpc::ClientContext ctx;
  v1::VersionResponse resp;
  ASSERT_TRUE(d.runtime()->Version(&ctx, v1::VersionRequest(), &resp).ok());
  EXPECT_EQ(resp.version(), "0.1.0");
  EXPECT_EQ(resp.runtime_name(), "berth");
  EXPECT_EQ(resp.runtime_version(), BERTH_VERSION);
  EXPECT_EQ(resp.runtime_api_version(), "v1");
}

TEST(Daemon, StatusRuntimeReadyWithRuncAndVerboseConfig) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  grpc::ClientContext ctx;
  v1::StatusRequest req;
  req.set_verbose(true);
  v1::StatusResponse resp;
  ASSERT_TRUE(d.runtime()->Status(&ctx, req, &resp).ok());
  const auto* rt = condition(resp, "RuntimeReady");
  ASSERT_NE(rt, nullptr);
  EXPECT_TRUE(rt->status()) << rt->message();
  // The harness gives the daemon a bridge network of its own (NetworkReady both ways: network_test).
  const auto* net = condition(resp, "NetworkReady");
  ASSERT_NE(net, nullptr);
  EXPECT_TRUE(net->status()) << net->message();
  auto network = nlohmann::json::parse(resp.info().at("network"));
  EXPECT_EQ(network["network"], d.network()->name());
  ASSERT_TRUE(resp.info().count("config"));
  auto cfg = nlohmann::json::parse(resp.info().at("config"));
  EXPECT_EQ(cfg["socket"], d.socket());
  EXPECT_EQ(cfg["root"], d.root());
  EXPECT_EQ(cfg["state"], d.state());
  EXPECT_EQ(cfg["default_runtime"], "runc");
  auto runtime = nlohmann::json::parse(resp.info().at("runtime"));
  EXPECT_NE(runtime["version"].get<std::string>().find("runc"), std::string::npos);
}

TEST(Daemon, StatusRuntimeNotReadyWhenBinaryMissing) {
  DaemonProcess d({.config_toml = "[runtimes.runc]\npath = \"/nonexistent/runc\"\n"});
  ASSERT_TRUE(d.start()) << d.log();
  grpc::ClientContext ctx;
  v1::StatusResponse resp;
  ASSERT_TRUE(d.runtime()->Status(&ctx, v1::StatusRequest(), &resp).ok());
  const auto* rt = condition(resp, "RuntimeReady");
  ASSERT_NE(rt, nullptr);
  EXPECT_FALSE(rt->status());
  EXPECT_NE(rt->message().find("/nonexistent/runc"), std::string::npos) << rt->message();
  EXPECT_FALSE(rt->reason().empty());
}

TEST(Daemon, StatusFollowsRuntimeThatFailsItsVersionCheck) {
  DaemonProcess d;
  std::string fake = d.dir() + "/fake-runc";
  write_file(fake, "#!/bin/sh\nexit 3\n", 0755);
  DaemonProcess e({.config_toml = "[runtimes.runc]\npath = \"" + fake + "\"\n"});
  ASSERT_TRUE(e.start()) << e.log();
  grpc::ClientContext ctx;
  v1::StatusResponse resp;
  ASSERT_TRUE(e.runtime()->Status(&ctx, v1::StatusRequest(), &resp).ok());
  EXPECT_FALSE(condition(resp, "RuntimeReady")->status());
  EXPECT_NE(condition(resp, "RuntimeReady")->message().find("exit status 3"), std::string::npos);
}

TEST(Daemon, RuntimeConfigReportsCgroupDriver) {
  {
    DaemonProcess d;
    ASSERT_TRUE(d.start()) << d.log();
    grpc::ClientContext ctx;
    v1::RuntimeConfigResponse resp;
    ASSERT_TRUE(d.runtime()->RuntimeConfig(&ctx, v1::RuntimeConfigRequest(), &resp).ok());
    EXPECT_EQ(resp.linux().cgroup_driver(), v1::CgroupDriver::CGROUPFS);
  }
  DaemonProcess d({.config_toml = "cgroup_driver = \"systemd\"\n"});
  ASSERT_TRUE(d.start()) << d.log();
  grpc::ClientContext ctx;
  v1::RuntimeConfigResponse resp;
  ASSERT_TRUE(d.runtime()->RuntimeConfig(&ctx, v1::RuntimeConfigRequest(), &resp).ok());
  EXPECT_EQ(resp.linux().cgroup_driver(), v1::CgroupDriver::SYSTEMD);
}

TEST(Daemon, SocketHasMode0660) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  struct stat st;
  ASSERT_EQ(stat(d.socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
}

TEST(Daemon, CreatesSocketDirectory) {
  TempDir t;
  DaemonProcess d({}, t / "deep/run/berth.sock", t / "root", t / "state");
  ASSERT_TRUE(d.start()) << d.log();
  struct stat st;
  EXPECT_EQ(stat((t / "deep/run/berth.sock").c_str(), &st), 0);
}

void expect_serving(DaemonProcess& d) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::VersionResponse resp;
  EXPECT_TRUE(d.runtime()->Version(&ctx, v1::VersionRequest(), &resp).ok());
}

TEST(Daemon, SecondInstanceOnSameStateDirIsRefused) {
  DaemonProcess first;
  ASSERT_TRUE(first.start()) << first.log();
  TempDir t;
  DaemonProcess second({.wait_ready = false}, t / "other.sock", t / "root", first.state());
  ASSERT_TRUE(second.start());
  EXPECT_EQ(second.wait_exit(std::chrono::seconds(10)), 1);
  EXPECT_NE(second.log().find("another berthd"), std::string::npos) << second.log();
  EXPECT_TRUE(first.running());
  expect_serving(first);
}

TEST(Daemon, SecondInstanceOnSameSocketIsRefusedAndLeavesFirstServing) {
  DaemonProcess first;
  ASSERT_TRUE(first.start()) << first.log();
  TempDir t;
  DaemonProcess second({.wait_ready = false}, first.socket(), t / "root", t / "state");
  ASSERT_TRUE(second.start());
  EXPECT_EQ(second.wait_exit(std::chrono::seconds(10)), 1);
  EXPECT_NE(second.log().find("served by another"), std::string::npos) << second.log();
  struct stat st;
  EXPECT_EQ(stat(first.socket().c_str(), &st), 0);
  expect_serving(first);
}

TEST(Daemon, StaleSocketIsReplaced) {
  DaemonProcess d;
  // A socket file nobody listens on, as a crashed daemon leaves behind.
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", d.socket().c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  close(fd);
  ASSERT_TRUE(d.start()) << d.log();
  expect_serving(d);
}

TEST(Daemon, RegularFileAtSocketPathIsNotRemoved) {
  DaemonProcess d({.wait_ready = false});
  write_file(d.socket(), "precious");
  ASSERT_TRUE(d.start());
  EXPECT_EQ(d.wait_exit(std::chrono::seconds(10)), 1);
  EXPECT_EQ(read_file(d.socket()), "precious");
}

TEST(Daemon, SigtermExitsZeroAndRemovesSocket) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  EXPECT_EQ(d.stop(SIGTERM), 0);
  struct stat st;
  EXPECT_NE(stat(d.socket().c_str(), &st), 0);
  EXPECT_NE(d.log().find("stopped"), std::string::npos);
}

TEST(Daemon, SigintExitsZero) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  EXPECT_EQ(d.stop(SIGINT), 0);
}

TEST(Daemon, BadConfigStopsStartNamingKeyAndFile) {
  DaemonProcess d({.config_toml = "log_levl = \"debug\"\n", .wait_ready = false});
  ASSERT_TRUE(d.start());
  EXPECT_EQ(d.wait_exit(std::chrono::seconds(10)), 2);
  EXPECT_NE(d.log().find("unknown key 'log_levl'"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("berth.toml"), std::string::npos) << d.log();
}

TEST(Daemon, RpcsAreLoggedAtDebug) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  expect_serving(d);
  EXPECT_NE(d.log().find("rpc Version"), std::string::npos) << d.log();
}

TEST(Daemon, ServesManyConcurrentCalls) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  auto channel = d.channel();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&] {
      auto stub = runtime::v1::RuntimeService::NewStub(channel);
      for (int i = 0; i < 50; ++i) {
        grpc::ClientContext ctx;
        v1::StatusResponse resp;
        if (stub->Status(&ctx, v1::StatusRequest(), &resp).ok()) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 32 * 50);
}

}  // namespace
}  // namespace berth::test
