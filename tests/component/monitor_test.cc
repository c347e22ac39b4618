// berth-monitor end to end: the real program with real runc on busybox containers. CRI log records
// of both streams, exit codes and the exit file, a failing or hanging create, log reopen after
// rotation, the protocol's version check, the exit watcher, and the monitor outliving the process
// that spawned it. Needs root. Attach is in monitor_attach_test.cc.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <regex>

#include "berth/command.h"
#include "berth/monitor.h"
#include "berth/monitor_protocol.h"
#include "berth/monitor_watcher.h"
#include "monitor_bundle.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Strings = std::vector<std::string>;

TEST(Monitor, LogsExactRecordsOfBothStreams) {
  MonitoredContainer c("streams", {"sh", "-c", "echo out1; echo err1 >&2; echo out2; printf 'dos\\r\\n'; printf tail"});
  spawn_and_start(c);
  auto exit = c.wait_exit_file();
  ASSERT_TRUE(exit.ok()) << exit.status().message();
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(c.contents("stdout"), (Strings{"F out1", "F out2", "F dos", "P tail"}));
  EXPECT_EQ(c.contents("stderr"), (Strings{"F err1"}));
  const std::regex rfc3339nano(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z)");
  for (const auto& r : c.log()) EXPECT_TRUE(std::regex_match(r.time, rfc3339nano)) << r.time;
  EXPECT_EQ(fs::status(c.log_path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  // The exit file comes first; the socket goes once the exit was reported.
  EXPECT_TRUE(eventually([&] { return !fs::exists(c.socket_path); }));
}

TEST(Monitor, OneMebibyteLineIsCutIntoSixteenKibPartials) {
  MonitoredContainer c("longline", {"sh", "-c", "head -c 1048576 /dev/zero | tr '\\000' x; echo; echo next"});
  spawn_and_start(c);
  ASSERT_TRUE(c.wait_exit_file().ok());
  auto records = c.log();
  ASSERT_EQ(records.size(), 65u);
  const std::string chunk(16384, 'x');
  for (size_t i = 0; i < 63; ++i) {
    EXPECT_EQ(records[i].tag, "P") << i;
    EXPECT_EQ(records[i].content, chunk) << i;
  }
  EXPECT_EQ(records[63].tag, "F");
  EXPECT_EQ(records[63].content, chunk);
  EXPECT_EQ(records[64].content, "next");
}

TEST(Monitor, ExitCodesAndSignalsReachTheExitFile) {
  MonitoredContainer ok("exit0", {"true"});
  MonitoredContainer three("exit3", {"sh", "-c", "exit 3"});
  MonitoredContainer killed("killed", {"sleep", "1000"});
  spawn_and_start(ok);
  spawn_and_start(three);
  spawn_and_start(killed);
  ASSERT_TRUE(killed.kill(SIGKILL).ok());

  auto e0 = ok.wait_exit_file();
  ASSERT_TRUE(e0.ok()) << e0.status().message();
  EXPECT_EQ(e0->exit_code, 0);
  EXPECT_EQ(e0->signal, 0);
  EXPECT_GT(e0->exited_at_ns, 1600000000LL * 1000000000LL);
  auto e3 = three.wait_exit_file();
  ASSERT_TRUE(e3.ok());
  EXPECT_EQ(e3->exit_code, 3);
  EXPECT_EQ(e3->reason, "exited with status 3");
  auto e9 = killed.wait_exit_file();
  ASSERT_TRUE(e9.ok());
  EXPECT_EQ(e9->exit_code, 137);
  EXPECT_EQ(e9->signal, SIGKILL);
  EXPECT_EQ(e9->reason, "killed by signal 9 (SIGKILL)");
  EXPECT_TRUE(eventually([&] { return !process_alive(killed.started().monitor_pid); }));
}

TEST(Monitor, FailedCreateCarriesTheRuntimeMessageAndLeavesNothing) {
  MonitoredContainer c("nope", {"nope"});
  auto r = c.spawn();
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_EQ(msg.rfind("create " + c.id + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("exec: \"nope\": executable file not found in $PATH"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(c.socket_path));
  EXPECT_FALSE(fs::exists(c.log_path));
  for (const auto& e : fs::directory_iterator("/proc")) {
    pid_t pid = atoi(e.path().filename().c_str());
    if (pid <= 0 || !process_alive(pid)) continue;
    std::string cmdline = read_file(e.path() / "cmdline");
    EXPECT_FALSE(cmdline.find("berth-monitor") != std::string::npos && cmdline.find(c.id) != std::string::npos)
        << "monitor " << pid << " left running";
  }
  Command state;
  state.argv = {"runc", "--root", c.runtime_root, "state", c.id};
  auto st = run_command(state);
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->success()) << "runc still knows " << c.id;
  auto exit = read_exit_file(c.exit_file);
  ASSERT_TRUE(exit.ok()) << exit.status().message();
  EXPECT_EQ(exit->exit_code, -1);
  EXPECT_NE(exit->reason.find("executable file not found"), std::string::npos) << exit->reason;
}

TEST(Monitor, HangingCreateIsKilledAtTheTimeout) {
  MonitoredContainer c("hang", {"true"});
  TempDir fake("berth-monitor-runtime");
  // A runtime whose create never returns; every other command (the cleanup's delete) succeeds.
  write_file(
      fake / "runtime",
      "#!/bin/sh\ncase \" $* \" in *\" create \"*) echo $$ > " + fake / "pid" + "; exec sleep 1000;; esac\nexit 0\n",
      0755);
  auto o = c.options();
  o.runtime_path = fake / "runtime";
  o.timeout = 500ms;
  auto r = c.spawn(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::deadline_exceeded) << r.status().message();
  EXPECT_EQ(r.status().message().rfind("create " + c.id + ": ", 0), 0u) << r.status().message();
  EXPECT_FALSE(fs::exists(c.socket_path));
  // The runtime (if it got as far as starting) was killed with the monitor's process group.
  pid_t runtime_pid = fs::exists(fake / "pid") ? atoi(read_file(fake / "pid").c_str()) : 0;
  if (runtime_pid > 0) {
    EXPECT_TRUE(eventually([&] { return !process_alive(runtime_pid); }));
  }
}

// A raw client of the control socket, to see the protocol itself.
std::string exchange(const std::string& socket_path, uint16_t version, monitor_protocol::Message* reply,
                     unsigned char* buf) {
  namespace proto = monitor_protocol;
  UniqueFd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path.c_str());
  if (connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return "connect failed";
  size_t n = proto::encode(proto::Type::hello, nullptr, 0, nullptr, 0, buf, version);
  if (send(s.get(), buf, n, 0) != static_cast<ssize_t>(n)) return "send failed";
  ssize_t r = recv(s.get(), buf, proto::kMaxPacket, 0);
  if (r <= 0) return "no reply";
  proto::DecodeError e = proto::decode(buf, static_cast<size_t>(r), reply);
  return e == proto::DecodeError::none ? "" : "undecodable reply";
}

TEST(Monitor, SpeaksOneVersionedProtocol) {
  namespace proto = monitor_protocol;
  MonitoredContainer c("proto", {"sleep", "1000"});
  spawn_and_start(c);
  unsigned char buf[proto::kMaxPacket];
  proto::Message m;
  ASSERT_EQ(exchange(c.socket_path, proto::kVersion, &m, buf), "");
  ASSERT_EQ(m.type, proto::Type::hello_reply);
  proto::HelloReply h;
  ASSERT_TRUE(m.fixed(&h));
  EXPECT_EQ(h.version, proto::kVersion);
  EXPECT_EQ(h.monitor_pid, c.started().monitor_pid);
  EXPECT_EQ(h.container_pid, c.started().container_pid);
  EXPECT_EQ(h.tty, 0);
  EXPECT_EQ(h.has_stdin, 0);

  ASSERT_EQ(exchange(c.socket_path, proto::kVersion + 1, &m, buf), "");
  ASSERT_EQ(m.type, proto::Type::error);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m.payload), m.length),
            "berth-monitor speaks protocol version 1, not 2");
}

TEST(Monitor, ReopenLogAfterRotation) {
  MonitoredContainer c("reopen", {"cat"});
  auto o = c.options();
  o.open_stdin = true;
  spawn_and_start(c, o);
  auto session = attach(c.socket_path, {.want_stdin = true, .want_stdout = false, .want_stderr = false});
  ASSERT_TRUE(session.ok()) << session.status().message();
  ASSERT_TRUE(write_all(session->stdin_fd.get(), "before\n"));
  ASSERT_TRUE(eventually([&] { return c.log_has("stdout", "F before"); }));

  fs::rename(c.log_path, c.log_path + ".1");
  Status s = reopen_log(c.socket_path, 10s);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(fs::exists(c.log_path));  // the reply comes only once the new file exists
  ASSERT_TRUE(write_all(session->stdin_fd.get(), "after\n"));
  ASSERT_TRUE(eventually([&] { return c.log_has("stdout", "F after"); }));
  auto old = read_cri_log(c.log_path + ".1");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].content, "before");
  EXPECT_EQ(c.contents("stdout"), (Strings{"F after"}));

  Status missing = reopen_log(c.socket_path + ".none", 1s);
  EXPECT_EQ(missing.code(), Code::not_found) << missing.message();
}

// Exits reported by a MonitorWatcher, in arrival order.
class ExitQueue {
 public:
  void push(const std::string& id, const ExitInfo& e) {
    std::lock_guard lock(mu_);
    exits_.emplace_back(id, e);
    cv_.notify_all();
  }
  bool wait_for(const std::string& id, ExitInfo* out) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 30s, [&] {
      for (const auto& [i, e] : exits_) {
        if (i == id) {
          *out = e;
          return true;
        }
      }
      return false;
    });
  }
  size_t count(const std::string& id) {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& x : exits_) n += x.first == id;
    return n;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<std::string, ExitInfo>> exits_;
};

TEST(Monitor, WatcherLearnsOfExitsWithoutPolling) {
  ExitQueue exits;
  MonitorWatcher watcher([&](const std::string& id, const ExitInfo& e) { exits.push(id, e); });
  MonitoredContainer c("watched", {"sh", "-c", "read x; exit 7"});
  auto o = c.options();
  o.open_stdin = true;
  spawn_and_start(c, o);
  ASSERT_TRUE(watcher.watch(c.id, c.socket_path, c.exit_file).ok());
  auto s = attach(c.socket_path, {.want_stdin = true, .want_stdout = false, .want_stderr = false});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(write_all(s->stdin_fd.get(), "\n"));
  ExitInfo e;
  ASSERT_TRUE(exits.wait_for(c.id, &e));
  EXPECT_EQ(e.exit_code, 7);
  EXPECT_EQ(e.reason, "exited with status 7");

  // Watching after the monitor is gone: the exit file answers.
  MonitorWatcher later([&](const std::string& id, const ExitInfo& x) { exits.push(id + "/later", x); });
  ASSERT_TRUE(later.watch(c.id, c.socket_path, c.exit_file).ok());
  ASSERT_TRUE(exits.wait_for(c.id + "/later", &e));
  EXPECT_EQ(e.exit_code, 7);
  EXPECT_EQ(exits.count(c.id), 1u);

  // Neither a socket nor an exit file: the monitor died without recording anything.
  TempDir nowhere("berth-monitor-gone");
  ASSERT_TRUE(watcher.watch("ghost", nowhere / "monitor.sock", nowhere / "exit.json").ok());
  ASSERT_TRUE(exits.wait_for("ghost", &e));
  EXPECT_EQ(e.exit_code, kUnknownExitCode);
  EXPECT_NE(e.reason.find("without recording an exit"), std::string::npos) << e.reason;
}

TEST(Monitor, OutlivesTheProcessThatSpawnedIt) {
  MonitoredContainer c(
      "orphan", {"sh", "-c", "trap 'exit 5' TERM; i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.05; done"});
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t spawner = fork();
  ASSERT_GE(spawner, 0);
  if (spawner == 0) {
    close(p[0]);
    auto r = spawn_monitor(c.options());
    MonitorStarted started = r.ok() ? *r : MonitorStarted{};
    if (write(p[1], &started, sizeof started) < 0) _exit(1);
    pause();
    _exit(0);
  }
  close(p[1]);
  MonitorStarted started;
  ssize_t n = read(p[0], &started, sizeof started);
  close(p[0]);
  kill(spawner, SIGKILL);
  waitpid(spawner, nullptr, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof started));
  ASSERT_GT(started.monitor_pid, 0) << c.diagnostics();
  c.adopt(started);

  ASSERT_TRUE(c.start().ok());
  EXPECT_TRUE(process_alive(started.monitor_pid));
  EXPECT_NE(getsid(started.monitor_pid), getsid(0));
  ASSERT_TRUE(eventually([&] { return c.log().size() >= 3; }));
  size_t seen = c.log().size();
  ASSERT_TRUE(eventually([&] { return c.log().size() >= seen + 3; }));  // the log keeps growing
  EXPECT_EQ(c.contents("stdout").front(), "F tick 0");

  ExitQueue exits;
  MonitorWatcher watcher([&](const std::string& id, const ExitInfo& e) { exits.push(id, e); });
  ASSERT_TRUE(watcher.watch(c.id, c.socket_path, c.exit_file).ok());
  ASSERT_TRUE(c.kill(SIGTERM).ok());
  ExitInfo e;
  ASSERT_TRUE(exits.wait_for(c.id, &e));
  EXPECT_EQ(e.exit_code, 5);
  auto file = read_exit_file(c.exit_file);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->exit_code, 5);
}

}  // namespace
}  // namespace berth::test
