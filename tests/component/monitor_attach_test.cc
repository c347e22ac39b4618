// berth-monitor attach end to end (real program, real runc, busybox): tty output and resize,
// stdin echo to several sessions at once, a client that never reads, and stdin_once.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "berth/monitor.h"
#include "monitor_bundle.h"

namespace berth::test {
namespace {

using namespace std::chrono_literals;
using Strings = std::vector<std::string>;

TEST(Monitor, TtyOutputIsStdoutAndResizeReachesTheContainer) {
  MonitoredContainer c("tty", {"sh", "-c", "read a; stty size; read b; stty size; echo bye >&2"}, true);
  auto o = c.options();
  o.open_stdin = true;
  spawn_and_start(c, o);
  auto session = attach(c.socket_path, {.want_stdin = true, .want_stdout = true, .want_stderr = true});
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_TRUE(session->tty);
  EXPECT_FALSE(session->stderr_fd.valid());
  std::string seen;
  ASSERT_TRUE(session->resize(30, 100).ok());
  ASSERT_TRUE(write_all(session->stdin_fd.get(), "go\n"));
  EXPECT_TRUE(read_until(session->stdout_fd.get(), "30 100", &seen)) << seen;
  ASSERT_TRUE(session->resize(40, 120).ok());
  ASSERT_TRUE(write_all(session->stdin_fd.get(), "go\n"));
  EXPECT_TRUE(read_until(session->stdout_fd.get(), "40 120", &seen)) << seen;
  auto exit = session->wait_exit(30s);
  ASSERT_TRUE(exit.ok()) << exit.status().message();
  EXPECT_EQ(exit->exit_code, 0);
  auto records = c.log();
  for (const auto& r : records) EXPECT_EQ(r.stream, "stdout") << r.content;
  EXPECT_TRUE(c.log_has("stdout", "F 30 100"));
  EXPECT_TRUE(c.log_has("stdout", "F 40 120"));
  EXPECT_TRUE(c.log_has("stdout", "F bye"));  // the tty carries what the process wrote to stderr
}

TEST(Monitor, AttachEchoesStdinToSeveralSessions) {
  MonitoredContainer c("attach", {"cat"});
  auto o = c.options();
  o.open_stdin = true;
  spawn_and_start(c, o);
  auto a = attach(c.socket_path, {.want_stdin = true});
  auto b = attach(c.socket_path, {});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_FALSE(b->stdin_fd.valid());
  EXPECT_TRUE(b->stderr_fd.valid());
  std::string seen_a, seen_b;
  ASSERT_TRUE(write_all(a->stdin_fd.get(), "hello\n"));
  EXPECT_TRUE(read_until(a->stdout_fd.get(), "hello\n", &seen_a));
  EXPECT_TRUE(read_until(b->stdout_fd.get(), "hello\n", &seen_b));

  auto c2 = attach(c.socket_path, {.want_stdin = true});
  ASSERT_TRUE(c2.ok());
  ASSERT_TRUE(write_all(c2->stdin_fd.get(), "second\n"));
  EXPECT_TRUE(read_until(a->stdout_fd.get(), "second\n", &seen_a));
  EXPECT_TRUE(read_until(b->stdout_fd.get(), "second\n", &seen_b));

  // Detaching every session leaves the container running with its stdin open.
  *a = AttachSession();
  *b = AttachSession();
  *c2 = AttachSession();
  auto d = attach(c.socket_path, {.want_stdin = true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  std::string seen_d;
  ASSERT_TRUE(write_all(d->stdin_fd.get(), "still here\n"));
  EXPECT_TRUE(read_until(d->stdout_fd.get(), "still here\n", &seen_d));
  // Sessions get output as it is read, the log a moment later.
  EXPECT_TRUE(eventually([&] {
    return c.contents("stdout") == Strings{"F hello", "F second", "F still here"};
  })) << ::testing::PrintToString(c.contents("stdout"));

  ASSERT_TRUE(c.kill(SIGKILL).ok());
  auto exit = d->wait_exit(30s);
  ASSERT_TRUE(exit.ok()) << exit.status().message();
  EXPECT_EQ(exit->exit_code, 137);
  char byte;
  EXPECT_EQ(read(d->stdout_fd.get(), &byte, 1), 0);  // session pipes are closed at the exit
}

TEST(Monitor, AClientThatNeverReadsBlocksNeitherContainerNorLog) {
  MonitoredContainer c("idle", {"sh", "-c", "read go; yes abcdefghijklmnopqrstuvwxyz | head -n 100000; echo done"});
  auto o = c.options();
  o.open_stdin = true;
  spawn_and_start(c, o);
  auto idle = attach(c.socket_path, {});
  auto driver = attach(c.socket_path, {.want_stdin = true, .want_stdout = false, .want_stderr = false});
  ASSERT_TRUE(idle.ok() && driver.ok());
  ASSERT_TRUE(write_all(driver->stdin_fd.get(), "\n"));
  auto exit = c.wait_exit_file();  // would never come if the idle pipe blocked the monitor
  ASSERT_TRUE(exit.ok()) << exit.status().message();
  EXPECT_EQ(exit->exit_code, 0);
  auto lines = c.contents("stdout");
  ASSERT_EQ(lines.size(), 100001u);
  EXPECT_EQ(lines.front(), "F abcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(lines.back(), "F done");
  auto idle_exit = idle->wait_exit(30s);
  ASSERT_TRUE(idle_exit.ok()) << idle_exit.status().message();
  EXPECT_EQ(idle_exit->exit_code, 0);
}

TEST(Monitor, StdinOnceClosesStdinWhenTheFirstSessionEnds) {
  MonitoredContainer once("once", {"cat"});
  auto o = once.options();
  o.open_stdin = true;
  o.stdin_once = true;
  spawn_and_start(once, o);
  auto a = attach(once.socket_path, {.want_stdin = true});
  ASSERT_TRUE(a.ok()) << a.status().message();
  std::string seen;
  ASSERT_TRUE(write_all(a->stdin_fd.get(), "x\n"));
  EXPECT_TRUE(read_until(a->stdout_fd.get(), "x\n", &seen));
  a->stdin_fd.reset();  // cat sees end of input and exits
  auto exit = a->wait_exit(30s);
  ASSERT_TRUE(exit.ok()) << exit.status().message();
  EXPECT_EQ(exit->exit_code, 0);

  // Without stdin_once the same detach leaves stdin open for the next session.
  MonitoredContainer many("many", {"cat"});
  auto m = many.options();
  m.open_stdin = true;
  spawn_and_start(many, m);
  {
    auto first = attach(many.socket_path, {.want_stdin = true});
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(write_all(first->stdin_fd.get(), "one\n"));
    first->stdin_fd.reset();
  }
  auto second = attach(many.socket_path, {.want_stdin = true});
  ASSERT_TRUE(second.ok()) << second.status().message();
  std::string seen2;
  ASSERT_TRUE(write_all(second->stdin_fd.get(), "two\n"));
  EXPECT_TRUE(read_until(second->stdout_fd.get(), "two\n", &seen2));
  ASSERT_TRUE(many.kill(SIGKILL).ok());
}

}  // namespace
}  // namespace berth::test
