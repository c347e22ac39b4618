// Nothing of berthd's reaches what it starts (runc's CVE-2024-21626 was one host descriptor left
// open into a container): while exec, attach and port-forward sessions, a metrics connection and
// the streaming and metrics listeners are open, an ExecSync'd command, an exec session's command,
// a container's init and a pause started then hold their stdio and nothing else. And berthd
// restarts on fixed metrics and streaming addresses with pods running (a pause that held a copy of
// a listener kept the next berthd from binding it).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "berth/test/streaming_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

constexpr auto kDescriptorsWait = std::chrono::seconds(30);

// "fd -> target" of every descriptor of `pid`, read on the host.
std::map<int, std::string> descriptors_of(int pid) {
  std::map<int, std::string> out;
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[4096];
    ssize_t n = ::readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
    out[std::atoi(e->d_name)] = n > 0 ? std::string(target, static_cast<size_t>(n)) : "?";
  }
  ::closedir(d);
  return out;
}

// The descriptors busybox `ls -l /proc/self/fd` printed, but the one ls reads the listing through.
std::map<int, std::string> descriptors_listed(const std::string& listing) {
  std::map<int, std::string> out;
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);) {
    size_t arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;
    size_t start = line.rfind(' ', arrow - 1);
    std::string target = line.substr(arrow + 4);
    if (target.rfind("/proc/", 0) == 0 && target.size() > 3 && target.compare(target.size() - 3, 3, "/fd") == 0)
      continue;
    out[std::atoi(line.substr(start + 1, arrow - start - 1).c_str())] = target;
  }
  return out;
}

std::string describe(const std::map<int, std::string>& fds) {
  std::string s;
  for (const auto& [fd, target] : fds) s += std::to_string(fd) + " -> " + target + "\n";
  return s;
}

bool only_stdio(const std::map<int, std::string>& fds) {
  for (const auto& [fd, target] : fds)
    if (fd > 2) return false;
  return !fds.empty();
}

// A TCP connection to 127.0.0.1:port, held open.
int connect_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class InheritedDescriptors : public PodFixture {
 protected:
  DaemonOptions fixed_addresses() {
    metrics_port_ = free_loopback_port();
    streaming_port_ = free_loopback_port();
    return {.config_toml = "metrics_address = \"127.0.0.1:" + std::to_string(metrics_port_) + "\"\n" +
                           "streaming_address = \"127.0.0.1:" + std::to_string(streaming_port_) + "\"\n"};
  }
  int pid_in(const google::protobuf::Map<std::string, std::string>& info) {
    return nlohmann::json::parse(info.at("info")).value("pid", 0);
  }
  int pause_pid(const std::string& pod) {
    v1::PodSandboxStatusResponse st;
    EXPECT_TRUE(cri_->pod_status(pod, &st, true).ok());
    return pid_in(st.info());
  }
  int init_pid(const std::string& id) {
    v1::ContainerStatusResponse st;
    EXPECT_TRUE(cri_->container_status(id, &st, true).ok());
    return pid_in(st.info());
  }
  int metrics_port_ = 0, streaming_port_ = 0;
};

// StartContainer returns once the runtime has told its init to exec the command, which it may not
// have done yet: until then the process is the runtime's (runc init holds its Go runtime's epoll
// and pipe). It is the container's command once its comm is the command's.
bool runs_command(int pid, const std::string& comm) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
    std::string now;
    std::getline(f, now);
    if (now == comm) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST_F(InheritedDescriptors, WhatBerthStartsHoldsItsStdioAlone) {
  ready("pod", fixed_addresses());
  std::string box = run(test_container("box", image(), {"sleep", "1000"}));
  run(test_container("echo", image(), {"nc", "-ll", "-p", "8080", "-e", "/bin/cat"}));

  // Sessions of every kind, and a metrics connection, open while the processes below start.
  auto shell = RemoteCommandClient::connect(exec_url(box, {"/bin/sh"}, true, true, false, true),
                                            {.transport = Transport::websocket,
                                             .protocols = {"v5.channel.k8s.io"},
                                             .stdin = true,
                                             .stderr = false,
                                             .tty = true});
  ASSERT_TRUE(shell.ok()) << shell.status().message();
  ASSERT_TRUE((*shell)->wait_stdout("# ", kDescriptorsWait));
  grpc::ClientContext actx;
  v1::AttachRequest areq;
  areq.set_container_id(box);
  areq.set_stdout(true);
  areq.set_stderr(true);
  v1::AttachResponse aresp;
  ASSERT_OK(cri_->runtime().Attach(&actx, areq, &aresp));
  auto attached = RemoteCommandClient::connect(aresp.url(), {.transport = Transport::spdy});
  ASSERT_TRUE(attached.ok()) << attached.status().message();
  auto forward = PortForwardClient::connect(port_forward_url(),
                                            {.transport = Transport::spdy, .protocols = {"portforward.k8s.io"}});
  ASSERT_TRUE(forward.ok()) << forward.status().message();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // nc listens
  auto stream = (*forward)->open(8080);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_TRUE((*stream)->write("ping").ok());
  auto echoed = (*stream)->read_exact(4, kDescriptorsWait);
  ASSERT_TRUE(echoed.ok()) << echoed.status().message();
  int metrics = connect_loopback(metrics_port_);
  ASSERT_GE(metrics, 0);

  // An ExecSync'd command: 0-2 (its output pipes), nothing else.
  v1::ExecSyncResponse r;
  ASSERT_OK(cri_->exec_sync(box, {"ls", "-l", "/proc/self/fd"}, &r, 10));
  auto probed = descriptors_listed(r.stdout());
  EXPECT_TRUE(only_stdio(probed)) << "ExecSync'd ls holds:\n" << r.stdout();
  // An exec session's command (through the runtime's exec, with a terminal, while the shell's
  // session stays open): its terminal alone. It is a session of its own rather than a line typed
  // into the shell, whose end had to be found in the terminal's output (twice, under load, it was
  // not found in time).
  auto listing = RemoteCommandClient::connect(exec_url(box, {"ls", "-l", "/proc/self/fd"}, false, true, false, true),
                                              {.transport = Transport::websocket,
                                               .protocols = {"v5.channel.k8s.io"},
                                               .stdin = false,
                                               .stderr = false,
                                               .tty = true});
  ASSERT_TRUE(listing.ok()) << listing.status().message();
  auto session = (*listing)->wait(kDescriptorsWait);
  ASSERT_TRUE(session.ended) << session.out;
  EXPECT_TRUE(only_stdio(descriptors_listed(session.out))) << "the exec session's ls holds:\n" << session.out;
  // A container's init and a pause made now.
  std::string late = run(test_container("late", image(), {"sleep", "1000"}));
  ASSERT_TRUE(runs_command(init_pid(late), "sleep"));
  auto init = descriptors_of(init_pid(late));
  EXPECT_TRUE(only_stdio(init)) << "a container's init holds:\n" << describe(init);
  std::string second_pod;
  auto config = test_pod("second");
  config.set_log_directory(logs_->path());
  ASSERT_OK(cri_->run_pod(config, &second_pod));
  ASSERT_TRUE(runs_command(pause_pid(second_pod), "pause"));
  auto pause = descriptors_of(pause_pid(second_pod));
  EXPECT_TRUE(only_stdio(pause)) << "a pause holds:\n" << describe(pause);
  auto first_pause = descriptors_of(pause_pid(pod_));
  EXPECT_TRUE(only_stdio(first_pause)) << "the first pod's pause holds:\n" << describe(first_pause);
  ::close(metrics);
  (*shell)->abort();
  (*attached)->abort();
}

// With pods running, the next berthd binds the same metrics and streaming addresses and serves.
TEST_F(InheritedDescriptors, BerthdRestartsOnFixedAddressesWhilePodsRun) {
  ready("pod", fixed_addresses());
  std::string id = run(test_container("box", image(), {"sleep", "1000"}));
  ASSERT_NE(http_get(metrics_port_, "/metrics").find("200"), std::string::npos);
  ASSERT_EQ(d_->stop(), 0);
  ASSERT_TRUE(d_->start()) << d_->log();
  CriClient again(*d_);
  EXPECT_NE(http_get(metrics_port_, "/metrics").find("200"), std::string::npos) << d_->log();
  grpc::ClientContext ctx;
  v1::ExecRequest req;
  req.set_container_id(id);
  req.add_cmd("true");
  req.set_stdout(true);
  v1::ExecResponse resp;
  ASSERT_OK(again.runtime().Exec(&ctx, req, &resp));
  EXPECT_NE(resp.url().find(":" + std::to_string(streaming_port_) + "/"), std::string::npos) << resp.url();
  auto r = run_command(resp.url(), {.transport = Transport::spdy, .stderr = false});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code.value_or(-1), 0);
}

}  // namespace
}  // namespace berth::test
