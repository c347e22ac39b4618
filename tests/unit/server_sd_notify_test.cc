// notify_service_manager: the datagram reaches a path socket and an abstract one; without
// NOTIFY_SOCKET nothing is sent and nothing fails; once taken out of the environment, it is still
// used. (That berthd says READY=1 only once it serves is e2e_daemon_config's NotifySocket test.)
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "../../server/sd_notify.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

// A datagram socket bound at `name` (a path, or "@..." for the abstract namespace).
int bound_socket(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, name.data(), name.size());
  if (name[0] == '@') a.sun_path[0] = '\0';
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (name[0] == '@' ? 0 : 1));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), len), 0) << strerror(errno);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

std::string receive(int fd) {
  char buf[4096];
  ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

class SdNotify : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("NOTIFY_SOCKET"); }
};

TEST_F(SdNotify, SendsToAPathSocket) {
  test::TempDir dir;
  int fd = bound_socket(dir / "notify");
  ::setenv("NOTIFY_SOCKET", (dir / "notify").c_str(), 1);
  ASSERT_TRUE(notify_service_manager("READY=1").ok());
  EXPECT_EQ(receive(fd), "READY=1");
  ::close(fd);
}

TEST_F(SdNotify, SendsToAnAbstractSocket) {
  std::string name = "@berth-notify-test-" + std::to_string(::getpid());
  int fd = bound_socket(name);
  ::setenv("NOTIFY_SOCKET", name.c_str(), 1);
  ASSERT_TRUE(notify_service_manager(reloading_state()).ok());
  std::string got = receive(fd);
  EXPECT_EQ(got.rfind("RELOADING=1\nMONOTONIC_USEC=", 0), 0u) << got;
  ::close(fd);
}

TEST_F(SdNotify, NothingToDoWithoutNotifySocket) {
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(notify_service_manager("READY=1").ok());
}

TEST_F(SdNotify, ABadNotifySocketIsAnError) {
  ::setenv("NOTIFY_SOCKET", "relative/path", 1);
  EXPECT_FALSE(notify_service_manager("READY=1").ok());
  test::TempDir dir;
  ::setenv("NOTIFY_SOCKET", (dir / "nobody-listens").c_str(), 1);
  EXPECT_FALSE(notify_service_manager("READY=1").ok());
}

// berthd takes the variable out of its environment at start (the programs it starts, runc among
// them, must not see it) and still notifies. In a child: what is taken stays taken.
TEST_F(SdNotify, TheTakenSocketLeavesTheEnvironmentAndStillGetsTheState) {
  test::TempDir dir;
  int fd = bound_socket(dir / "notify");
  ::setenv("NOTIFY_SOCKET", (dir / "notify").c_str(), 1);
  pid_t child = ::fork();
  if (child == 0) {
    take_notify_socket();
    if (::getenv("NOTIFY_SOCKET")) _exit(10);
    _exit(notify_service_manager("READY=1").ok() ? 0 : 11);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(receive(fd), "READY=1");
  ::close(fd);
}

}  // namespace
}  // namespace berth
