// berthd's configuration as an operator manages it: --print-config and --check-config on a main
// file with drop-ins, SIGHUP reloads (a registry mirror, CA file and `insecure`, the log level, the
// streaming timeouts and the metrics address change in a running daemon, each seen in what it
// does; an invalid drop-in keeps the running configuration; a restart-only key is reported), and
// the sd_notify readiness protocol (READY=1 only once the socket serves, RELOADING=1 around a
// reload, STOPPING=1 at the end).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"
#include "berth/test/streaming_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

using namespace std::chrono_literals;

// Runs berthd with `args`; its exit code, stdout in *out and stderr in *err.
int run_berthd(const std::vector<std::string>& args, std::string* out, std::string* err) {
  TempDir dir("berthd-run");
  std::string cmd = berthd_path();
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " >" + (dir / "out") + " 2>" + (dir / "err");
  int status = std::system(cmd.c_str());
  *out = read_file(dir / "out");
  *err = read_file(dir / "err");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override { ::mkdir((main_file() + ".d").c_str(), 0755); }
  std::string main_file() const { return dir_ / "berth.toml"; }
  std::string drop_in(const std::string& name) const { return main_file() + ".d/" + name; }
  TempDir dir_{"berth-config"};
};

TEST_F(ConfigFiles, PrintConfigShowsTheMergeAndWhereEachValueCameFrom) {
  write_file(main_file(), "log_level = \"warn\"\nmax_concurrent_rpcs = 64\n");
  write_file(drop_in("10-registry.toml"), "[registries.\"registry.example\"]\nmirrors = [\"http://127.0.0.1:5000\"]\n");
  write_file(drop_in("20-level.toml"), "log_level = \"error\"\n");
  std::string out, err;
  ASSERT_EQ(run_berthd({"--config", main_file(), "--print-config"}, &out, &err), 0) << err;
  EXPECT_NE(out.find("log_level = \"error\"  # " + drop_in("20-level.toml")), std::string::npos) << out;
  EXPECT_NE(out.find("max_concurrent_rpcs = 64  # " + main_file()), std::string::npos) << out;
  EXPECT_NE(out.find("[registries.\"registry.example\"]\nmirrors = [\"http://127.0.0.1:5000\"]  # " +
                     drop_in("10-registry.toml")),
            std::string::npos)
      << out;
  // Flags are part of it.
  ASSERT_EQ(run_berthd({"--config", main_file(), "--print-config", "--socket", "/tmp/x.sock"}, &out, &err), 0) << err;
  EXPECT_NE(out.find("socket = \"/tmp/x.sock\"  # --socket flag"), std::string::npos) << out;
  // What it prints is a configuration berthd reads back.
  write_file(dir_ / "printed.toml", out);
  EXPECT_EQ(run_berthd({"--config", dir_ / "printed.toml", "--check-config"}, &out, &err), 0) << err;
}

TEST_F(ConfigFiles, CheckConfigNamesTheFileAndKeyOfTheFirstError) {
  write_file(main_file(), "log_level = \"info\"\n");
  write_file(drop_in("10-ok.toml"), "shutdown_timeout_seconds = 5\n");
  std::string out, err;
  ASSERT_EQ(run_berthd({"--config", main_file(), "--check-config"}, &out, &err), 0) << err;
  EXPECT_NE(out.find("configuration is valid (" + main_file() + ", " + drop_in("10-ok.toml") + ")"), std::string::npos)
      << out;
  write_file(drop_in("20-bad.toml"), "streaming_idle_timeout_seconds = \"long\"\n");
  EXPECT_EQ(run_berthd({"--config", main_file(), "--check-config"}, &out, &err), 2);
  EXPECT_NE(
      err.find("config " + drop_in("20-bad.toml") + ": key 'streaming_idle_timeout_seconds': expected an integer"),
      std::string::npos)
      << err;
  // A bad flag is named as one.
  ::unlink(drop_in("20-bad.toml").c_str());
  EXPECT_EQ(run_berthd({"--config", main_file(), "--check-config", "--root", "relative"}, &out, &err), 2);
  EXPECT_NE(err.find("flags: key 'root': must be an absolute path"), std::string::npos) << err;
}

// Waits until the daemon's log holds `text` after byte `from`; the offset just past it, or npos.
size_t wait_for_log(DaemonProcess& d, const std::string& text, size_t from = 0, std::chrono::seconds timeout = 20s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string log = d.log();
    if (size_t at = log.find(text, from); at != std::string::npos) return at + text.size();
    std::this_thread::sleep_for(20ms);
  }
  return std::string::npos;
}

// Writes the drop-in <config file>.d/<name> of a daemon started with a config file, sends SIGHUP
// and waits for the reload to report `keys` applied; the log offset past that, or npos.
size_t reload_with(DaemonProcess& d, const std::string& name, const std::string& text, const std::string& keys,
                   size_t from) {
  const std::string drop_ins = d.dir() + "/berth.toml.d";
  ::mkdir(drop_ins.c_str(), 0755);
  write_file(drop_ins + "/" + name, text);
  ::kill(d.pid(), SIGHUP);
  return wait_for_log(d, ": applied " + keys, from);
}

class Reload : public BusyboxRegistryTest {};

TEST_F(Reload, SighupAppliesAMirrorAndTheLogLevelAndRefusesABadFile) {
  // Images named after a registry nobody serves: only a mirror can give them.
  std::string dead = "127.0.0.1:" + std::to_string(free_loopback_port());
  std::string image = dead + "/test/busybox:latest";
  DaemonProcess& d = daemon({.config_toml = "log_level = \"info\"\n", .test_network = false, .log_level = ""});
  std::string main_file = d.dir() + "/berth.toml";
  std::string drop_ins = main_file + ".d";
  ASSERT_EQ(::mkdir(drop_ins.c_str(), 0755), 0);
  CriClient cri(d);
  EXPECT_FALSE(cri.pull_image(image).ok());

  write_file(drop_ins + "/10-mirror.toml",
             "log_level = \"debug\"\n[registries.\"" + dead + "\"]\nmirrors = [\"" + registry_->url() + "\"]\n");
  ::kill(d.pid(), SIGHUP);
  size_t mark = wait_for_log(
      d, "config: reloaded from " + main_file + ", " + drop_ins + "/10-mirror.toml: applied log_level, registries");
  ASSERT_NE(mark, std::string::npos) << d.log();
  grpc::Status s = cri.pull_image(image);
  EXPECT_TRUE(s.ok()) << s.error_message() << d.log();
  // Debug lines (one per rpc) now show.
  EXPECT_NE(d.log().find(" debug ", mark), std::string::npos) << d.log().substr(mark);
  // Status's verbose info shows the configuration in effect, not the start's.
  auto effective = [&] {
    v1::StatusResponse st;
    EXPECT_TRUE(cri.status(&st, true).ok());
    return nlohmann::json::parse(st.info().at("config"));
  };
  nlohmann::json shown = effective();
  EXPECT_EQ(shown["log_level"], "debug") << shown.dump();
  const nlohmann::json started_rpcs = shown["max_concurrent_rpcs"];
  ASSERT_TRUE(started_rpcs.is_number()) << shown.dump();
  EXPECT_NE(shown["registries"].dump().find(registry_->url()), std::string::npos) << shown.dump();

  // An invalid drop-in: the log names it and the key, and the running configuration stays.
  write_file(drop_ins + "/20-bad.toml", "log_level = \"loud\"\n");
  ::kill(d.pid(), SIGHUP);
  mark = wait_for_log(
      d, "reload refused, keeping the running configuration: config " + drop_ins + "/20-bad.toml: key 'log_level'",
      mark);
  ASSERT_NE(mark, std::string::npos) << d.log();
  ASSERT_TRUE(cri.remove_image(image).ok());
  s = cri.pull_image(image);
  EXPECT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(d.running());

  // A key that needs a restart is reported, not applied.
  write_file(drop_ins + "/20-bad.toml", "max_concurrent_rpcs = 64\n");
  ::kill(d.pid(), SIGHUP);
  mark = wait_for_log(d,
                      "config: key max_concurrent_rpcs changed; it takes effect at the next restart (set in " +
                          drop_ins + "/20-bad.toml)",
                      mark);
  EXPECT_NE(mark, std::string::npos) << d.log();
  EXPECT_EQ(effective()["max_concurrent_rpcs"], started_rpcs) << "a restart-only key shows its running value";
  ASSERT_TRUE(cri.remove_image(image).ok());
}

// Registry settings changed by a reload are those of the next pull: a TLS registry whose CA berthd
// does not trust is refused until a reload names its ca_file; `insecure` added by the next reload
// makes berthd speak plain HTTP to it (which its TLS port refuses), and taken out again the pull
// works again.
TEST_F(Reload, RegistryCaFileAndInsecureApplyToTheNextPull) {
  RegistryProcess tls("", "", true);
  push_test_images("https://" + tls.host(), {"--only", "busybox"}, tls.ca_file());
  const std::string image = tls.host() + "/test/busybox:latest";
  DaemonProcess& d = daemon({.config_toml = "log_level = \"info\"\n", .test_network = false, .log_level = ""});
  CriClient cri(d);
  grpc::Status s = cri.pull_image(image);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_NE(s.error_message().find("certificate not trusted"), std::string::npos) << s.error_message();

  const std::string trusted = "[registries.\"" + tls.host() + "\"]\nca_file = \"" + tls.ca_file() + "\"\n";
  size_t mark = reload_with(d, "10-registry.toml", trusted, "registries", 0);
  ASSERT_NE(mark, std::string::npos) << d.log();
  ASSERT_OK(cri.pull_image(image));
  ASSERT_OK(cri.remove_image(image));

  mark = reload_with(d, "10-registry.toml", trusted + "insecure = true\n", "registries", mark);
  ASSERT_NE(mark, std::string::npos) << d.log();
  s = cri.pull_image(image);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find(": 400"), std::string::npos)
      << "a plain HTTP request to the TLS port: " << s.error_message();
  EXPECT_EQ(s.error_message().find("certificate"), std::string::npos) << s.error_message();
  EXPECT_TRUE(cri.list_images().empty());

  mark = reload_with(d, "10-registry.toml", trusted, "registries", mark);
  ASSERT_NE(mark, std::string::npos) << d.log();
  ASSERT_OK(cri.pull_image(image));
  ASSERT_OK(cri.remove_image(image));
}

// metrics_address moved by a reload: the old address stops answering and the new one serves
// /metrics; a new address that cannot be bound (another socket listens there) leaves the
// endpoint where it was, and says so.
TEST_F(Reload, MetricsEndpointMovesAndStaysWhereItIsWhenTheNewAddressIsTaken) {
  const int first = free_loopback_port();
  DaemonProcess& d =
      daemon({.config_toml = "log_level = \"info\"\nmetrics_address = \"127.0.0.1:" + std::to_string(first) + "\"\n",
              .test_network = false,
              .log_level = ""});
  std::string reply = http_get(first, "/metrics");
  ASSERT_EQ(reply.rfind("HTTP/1.0 200", 0), 0u) << reply;

  const int second = free_loopback_port();
  size_t mark = reload_with(d, "10-metrics.toml", "metrics_address = \"127.0.0.1:" + std::to_string(second) + "\"\n",
                            "metrics_address", 0);
  ASSERT_NE(mark, std::string::npos) << d.log();
  reply = http_get(second, "/metrics");
  EXPECT_EQ(reply.rfind("HTTP/1.0 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("berth_rpc_requests_total{"), std::string::npos) << reply;
  EXPECT_EQ(http_get(first, "/metrics"), "") << "the old address still answers";

  // A port the test holds.
  int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(taken, 1), 0);
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string third = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  write_file(d.dir() + "/berth.toml.d/10-metrics.toml", "metrics_address = \"" + third + "\"\n");
  ::kill(d.pid(), SIGHUP);
  mark = wait_for_log(d, "key 'metrics_address'", mark);
  EXPECT_NE(mark, std::string::npos) << d.log();
  EXPECT_NE(wait_for_log(d, "still serving \"127.0.0.1:" + std::to_string(second) + "\"", mark), std::string::npos)
      << d.log();
  reply = http_get(second, "/metrics");
  EXPECT_EQ(reply.rfind("HTTP/1.0 200", 0), 0u) << reply;
  ::close(taken);
}

class ReloadStreaming : public PodFixture {};

// Streaming timeouts changed by a reload apply to the sessions and URLs that come after it. With
// the idle timeout lowered from an hour to 2 s, an idle exec and an idle port-forward opened after
// the reload are cut, while an idle exec opened before it, under its hour, still answers. A URL
// handed out after the token TTL went down to 1 s has expired once that cut came (2 s idle later);
// one handed out before, under 10 minutes, has not.
TEST_F(ReloadStreaming, TimeoutsApplyToNewSessionsAndUrls) {
  ready("pod", {.config_toml = "streaming_idle_timeout_seconds = 3600\nstreaming_token_ttl_seconds = 600\n"});
  std::string id = run(shell_container("box", "sleep 1000"));
  const StreamOptions out_only{.stderr = false};
  // Idle once it said it started (the test must not take a session that never came up as cut).
  auto idle_exec = [&] {
    auto c = RemoteCommandClient::connect(
        exec_url(id, {"/bin/sh", "-c", "echo started; exec sleep 1000"}, false, true, false), out_only);
    EXPECT_TRUE(c.ok()) << c.status().message();
    EXPECT_TRUE(c.ok() && (*c)->wait_stdout("started", 30s));
    return c;
  };
  auto before = idle_exec();
  ASSERT_TRUE(before.ok());
  const std::string early_url = exec_url(id, {"echo", "early"}, false, true, false);

  size_t mark =
      reload_with(*d_, "10-streaming.toml", "streaming_idle_timeout_seconds = 2\nstreaming_token_ttl_seconds = 1\n",
                  "streaming_idle_timeout_seconds, streaming_token_ttl_seconds", 0);
  ASSERT_NE(mark, std::string::npos) << d_->log();
  const std::string late_url = exec_url(id, {"echo", "late"}, false, true, false);
  auto after = idle_exec();
  ASSERT_TRUE(after.ok());
  auto forward = PortForwardClient::connect(port_forward_url(),
                                            {.transport = Transport::spdy, .protocols = {"portforward.k8s.io"}});
  ASSERT_TRUE(forward.ok()) << forward.status().message();

  CommandResult cut = (*after)->wait(60s);
  EXPECT_TRUE(cut.ended) << "an idle exec opened after the reload was not cut";
  EXPECT_FALSE(cut.exit_code.has_value()) << "the command ended, the session was not cut: " << *cut.exit_code;
  EXPECT_TRUE((*forward)->wait_closed(60s)) << "an idle port-forward opened after the reload was not cut";
  EXPECT_NE(d_->log().find("spdy connection idle for 2s", mark), std::string::npos) << d_->log().substr(mark);
  // The session from before the reload keeps its hour.
  EXPECT_TRUE((*before)->ping(10s).ok());

  auto late = RemoteCommandClient::connect(late_url, out_only);
  EXPECT_EQ(http_status_of(late.status()), 404) << late.status().message();
  auto early = run_command(early_url, out_only);
  ASSERT_TRUE(early.ok()) << early.status().message();
  EXPECT_EQ(early->out, "early\n");
  (*before)->abort();
}

// The test's end of $NOTIFY_SOCKET: a datagram socket it reads berthd's messages from.
class NotifyListener {
 public:
  NotifyListener(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, name.data(), name.size());
    if (name[0] == '@') a.sun_path[0] = '\0';
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (name[0] == '@' ? 0 : 1));
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), len), 0) << strerror(errno);
    timeval tv{20, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~NotifyListener() { ::close(fd_); }
  std::string next() {
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }

 private:
  int fd_ = -1;
};

bool answers_version(DaemonProcess& d) {
  auto stub = d.runtime();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 2s);
  runtime::v1::VersionRequest req;
  runtime::v1::VersionResponse resp;
  return stub->Version(&ctx, req, &resp).ok();
}

class Notify : public ::testing::TestWithParam<bool> {};

TEST_P(Notify, ReadyOnlyOnceTheSocketServesThenReloadingAndStopping) {
  TempDir dir("berth-notify");
  std::string name = GetParam() ? "@berth-notify-" + std::to_string(::getpid()) : dir / "notify";
  NotifyListener listener(name);
  DaemonProcess d({.wait_ready = false, .test_network = false, .env = {"NOTIFY_SOCKET=" + name}});
  ASSERT_TRUE(d.start());
  std::string first = listener.next();
  ASSERT_EQ(first.rfind("READY=1\n", 0), 0u) << first << d.log();
  // Nothing is said before it serves: the moment READY=1 arrives, the socket answers.
  EXPECT_TRUE(answers_version(d)) << d.log();
  ::kill(d.pid(), SIGHUP);
  std::string reloading = listener.next();
  EXPECT_EQ(reloading.rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << reloading;
  EXPECT_EQ(listener.next(), "READY=1");
  EXPECT_EQ(d.stop(), 0);
  EXPECT_EQ(listener.next(), "STOPPING=1");
}

INSTANTIATE_TEST_SUITE_P(PathAndAbstract, Notify, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "abstract" : "path"; });

}  // namespace
}  // namespace berth::test
