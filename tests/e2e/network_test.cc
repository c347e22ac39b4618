// Pod networking on a real berthd with Debian's CNI plugins (bridge, host-local, portmap) and small
// plugin scripts for the failure cases: addresses, reachability, teardown that leaves nothing,
// errors, timeouts, the ETXTBSY retry, readiness, conf dir hot reload and DEL from the result
// cache (or without it, when an entry is corrupt).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// A TCP server inside a network namespace: answers every connection with "hello from the pod".
class NetnsListener {
 public:
  NetnsListener(const std::string& netns_path, int port) {
    std::promise<int> bound;
    auto ready = bound.get_future();
    thread_ = std::thread([this, netns_path, port, &bound] {
      int ns = ::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) {
        bound.set_value(-1);
        return;
      }
      ::close(ns);
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(port));
      if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0) {
        ::close(fd);
        bound.set_value(-1);
        return;
      }
      fd_ = fd;
      bound.set_value(fd);
      for (;;) {
        int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;  // shut down
        const char msg[] = "hello from the pod";
        (void)!::write(c, msg, sizeof msg - 1);
        ::close(c);
      }
    });
    ok_ = ready.get() >= 0;
  }
  ~NetnsListener() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }

 private:
  std::thread thread_;
  std::atomic<int> fd_{-1};
  bool ok_ = false;
};

// Connects to ip:port from the host and returns what the server says before closing.
std::string fetch(const std::string& ip, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    char buf[256];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

class Network : public DaemonTest {
 protected:
  // A plugin script in the test's own plugin dir (searched before /usr/lib/cni).
  void plugin(const std::string& name, const std::string& script) { write_file(plugins_ / name, script, 0755); }
  std::string plugin_dirs_toml() const { return "cni_plugin_dirs = [\"" + plugins_.path() + "\", \"/usr/lib/cni\"]\n"; }
  // A daemon on `net` with the test's plugin dir.
  DaemonProcess& daemon_on(const std::shared_ptr<TestNetwork>& net, const std::string& extra_toml = "") {
    return daemon({.config_toml = "cni_conf_dir = \"" + net->conf_dir() + "\"\n" + plugin_dirs_toml() + extra_toml,
                   .network = net});
  }
  static std::string pod_ip(CriClient& cri, const std::string& id) {
    v1::PodSandboxStatusResponse st;
    EXPECT_TRUE(cri.pod_status(id, &st).ok());
    return st.status().network().ip();
  }
  // Nothing of any pod is left: no sandbox, netns pin, bundle, address, veth or cache entry.
  static void expect_nothing_left(CriClient& cri, DaemonProcess& d, const TestNetwork& net) {
    EXPECT_TRUE(cri.list_pods().empty());
    EXPECT_TRUE(fs::is_empty(d.state() + "/netns"));
    EXPECT_TRUE(fs::is_empty(d.state() + "/sandboxes"));
    EXPECT_TRUE(net.allocated_ips().empty()) << net.allocated_ips().size() << " addresses still allocated";
    EXPECT_TRUE(net.veths().empty()) << net.veths().size() << " veths left on " << net.bridge();
    EXPECT_TRUE(!fs::exists(d.root() + "/cni/results") || fs::is_empty(d.root() + "/cni/results"));
  }
  static bool wait_network_ready(CriClient& cri, bool want, std::string* message = nullptr) {
    for (int i = 0; i < 250; ++i) {
      v1::StatusResponse st;
      if (cri.status(&st).ok()) {
        for (const auto& c : st.status().conditions()) {
          if (c.type() != "NetworkReady") continue;
          if (message) *message = c.reason() + ": " + c.message();
          if (c.status() == want) return true;
        }
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  TempDir plugins_{"berth-plugins"};
};

TEST_F(Network, BridgePodIsReachableAndStopFreesEverything) {
  auto& d = daemon();
  CriClient cri(d);
  TestNetwork& net = *d.network();
  std::string id;
  grpc::Status s = cri.run_pod(test_pod("web"), &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::string ip = pod_ip(cri, id);
  EXPECT_EQ(ip.rfind(net.subnet_prefix(), 0), 0u) << ip << " not in " << net.subnet();
  EXPECT_EQ(net.allocated_ips(), std::vector<std::string>{ip});
  EXPECT_EQ(net.veths().size(), 1u);
  {
    NetnsListener listener(d.state() + "/netns/" + id, 8080);
    ASSERT_TRUE(listener.ok());
    EXPECT_EQ(fetch(ip, 8080), "hello from the pod");
  }
  // The pod's eth0 holds the address inside its own netns.
  EXPECT_NE(shell("nsenter --net=" + d.state() + "/netns/" + id + " ip -o -4 addr show eth0").find(ip + "/24"),
            std::string::npos);
  ASSERT_TRUE(cri.stop_pod(id).ok());
  EXPECT_TRUE(net.allocated_ips().empty());
  EXPECT_TRUE(net.veths().empty());
  v1::PodSandboxStatusResponse st;
  ASSERT_TRUE(cri.pod_status(id, &st).ok());
  EXPECT_EQ(st.status().network().ip(), "");
  ASSERT_TRUE(cri.stop_pod(id).ok());  // DEL is idempotent
  ASSERT_TRUE(cri.remove_pod(id).ok());
  expect_nothing_left(cri, d, net);
}

TEST_F(Network, PortMappingsBecomePortmapRulesThatStopRemoves) {
  auto& d = daemon();
  CriClient cri(d);
  TestNetwork& net = *d.network();
  int host_port = free_loopback_port();
  auto c = test_pod("ports");
  auto* pm = c.add_port_mappings();
  pm->set_protocol(v1::TCP);
  pm->set_container_port(8080);
  pm->set_host_port(host_port);
  std::string id;
  grpc::Status s = cri.run_pod(c, &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(net.nat_rules_naming(id).empty()) << shell("iptables-save -t nat");
  {
    NetnsListener listener(d.state() + "/netns/" + id, 8080);
    ASSERT_TRUE(listener.ok());
    // Through the host port on the host's own address, DNAT'ed by portmap into the pod.
    std::string host_ip = shell("ip -o -4 route get 1.1.1.1 | sed -n 's/.* src \\([0-9.]*\\).*/\\1/p'");
    host_ip.erase(host_ip.find_last_not_of("\n ") + 1);
    ASSERT_FALSE(host_ip.empty());
    EXPECT_EQ(fetch(host_ip, host_port), "hello from the pod") << shell("iptables-save -t nat");
  }
  ASSERT_TRUE(cri.stop_pod(id).ok());
  EXPECT_TRUE(net.nat_rules_naming(id).empty()) << shell("iptables-save -t nat");
  ASSERT_TRUE(cri.remove_pod(id).ok());
  expect_nothing_left(cri, d, net);
}

TEST_F(Network, TenPodsInParallelGetTenDistinctAddresses) {
  auto& d = daemon();
  CriClient cri(d);
  std::vector<std::future<std::string>> runs;
  for (int i = 0; i < 10; ++i) {
    runs.push_back(std::async(std::launch::async, [&d, i] {
      CriClient c(d);
      std::string id;
      grpc::Status s = c.run_pod(test_pod("par-" + std::to_string(i)), &id);
      EXPECT_TRUE(s.ok()) << s.error_message();
      return s.ok() ? pod_ip(c, id) : std::string();
    }));
  }
  std::set<std::string> ips;
  for (auto& r : runs) ips.insert(r.get());
  EXPECT_EQ(ips.size(), 10u);
  EXPECT_EQ(ips.count(""), 0u);
  EXPECT_EQ(d.network()->allocated_ips().size(), 10u);
  for (const auto& p : cri.list_pods()) ASSERT_TRUE(cri.remove_pod(p.id()).ok());
  expect_nothing_left(cri, d, *d.network());
}

TEST_F(Network, PluginErrorFailsTheRunVerbatimAndLeavesNothing) {
  auto net = std::make_shared<TestNetwork>();
  plugin("refuser", R"(#!/bin/sh
cat >/dev/null
if [ "$CNI_COMMAND" = ADD ]; then
  echo '{"cniVersion":"1.0.0","code":7,"msg":"invalid network config","details":"refuser does not like this pod"}'
  exit 1
fi
exit 0
)");
  net->write_conflist({R"({"type": "refuser"})"});
  auto& d = daemon_on(net);
  CriClient cri(d);
  std::string id;
  grpc::Status s = cri.run_pod(test_pod("refused"), &id);
  ASSERT_FALSE(s.ok());
  // The plugin's error object reaches the caller as the exact JSON text it printed.
  EXPECT_NE(
      s.error_message().find(
          R"(plugin refuser (ADD): {"cniVersion":"1.0.0","code":7,"msg":"invalid network config","details":"refuser does not like this pod"})"),
      std::string::npos)
      << s.error_message();
  expect_nothing_left(cri, d, *net);
}

TEST_F(Network, HungPluginTimesOutAndIsKilled) {
  auto net = std::make_shared<TestNetwork>();
  plugin("hanger", "#!/bin/sh\ncat >/dev/null\n[ \"$CNI_COMMAND\" = ADD ] || exit 0\necho $$ > " +
                       (plugins_ / "hanger.pid") + "\nexec sleep 120\n");
  net->write_conflist({R"({"type": "hanger"})"});
  auto& d = daemon_on(net, "cni_plugin_timeout_seconds = 1\n");
  CriClient cri(d);
  std::string id;
  grpc::Status s = cri.run_pod(test_pod("hung"), &id);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("plugin hanger (ADD): timed out after 1000ms"), std::string::npos)
      << s.error_message();
  int pid = std::stoi(read_file(plugins_ / "hanger.pid"));
  EXPECT_NE(::kill(pid, 0), 0) << "the hung plugin is still running";
  expect_nothing_left(cri, d, *net);
}

TEST_F(Network, PluginThatClosesItsOutputAndHangsTimesOutAndIsKilled) {
  auto net = std::make_shared<TestNetwork>();
  // Nothing left to read: only a deadline on waiting for its exit can end this ADD.
  plugin("closer", "#!/bin/sh\ncat >/dev/null\n[ \"$CNI_COMMAND\" = ADD ] || exit 0\necho $$ > " +
                       (plugins_ / "closer.pid") + "\nexec >&- 2>&-\nsleep 1000\n");
  net->write_conflist({R"({"type": "closer"})"});
  auto& d = daemon_on(net, "cni_plugin_timeout_seconds = 1\n");
  CriClient cri(d);
  std::string id;
  auto run = std::async(std::launch::async, [&] { return cri.run_pod(test_pod("closed"), &id); });
  if (run.wait_for(30s) != std::future_status::ready) {
    d.stop(SIGKILL);  // ends the RPC, so the future (and this test) can finish
    FAIL() << "RunPodSandbox still waits for the plugin after 30s";
  }
  grpc::Status s = run.get();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("plugin closer (ADD): timed out after 1000ms"), std::string::npos)
      << s.error_message();
  int pgid = std::stoi(read_file(plugins_ / "closer.pid"));
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {  // the orphaned sleep is reaped by init, in its own time
    gone = ::kill(-pgid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(gone) << "the plugin's process group is still running";
  expect_nothing_left(cri, d, *net);
}

TEST_F(Network, UnreadableAddResultIsReleasedWithDel) {
  auto net = std::make_shared<TestNetwork>();
  // Last in the chain after bridge and portmap: ADD succeeds everywhere, but the final result
  // names an address that is none. The address and veth bridge made must not leak.
  plugin("garbler", "#!/bin/sh\ncat >/dev/null\necho \"$CNI_COMMAND\" >> " + (plugins_ / "garbler.log") + R"(
[ "$CNI_COMMAND" = ADD ] && echo '{"cniVersion":"1.0.0","ips":[{"address":"10.1.2.300/24"}]}'
exit 0
)");
  net->write_conflist({R"({"type": "garbler"})"});
  auto& d = daemon_on(net);
  CriClient cri(d);
  std::string id;
  grpc::Status s = cri.run_pod(test_pod("garbled"), &id);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("bad address \"10.1.2.300/24\""), std::string::npos) << s.error_message();
  EXPECT_EQ(read_file(plugins_ / "garbler.log"), "ADD\nDEL\n");
  expect_nothing_left(cri, d, *net);
}

// The pause starts while CNI ADD runs. When the pause fails, the undo waits for the ADD to end
// before its DEL: a DEL that overtook the ADD would leave behind the address and veth of the ADD.
TEST_F(Network, PauseThatFailsDuringTheAddIsUndoneAfterTheAdd) {
  auto net = std::make_shared<TestNetwork>();
  // Last in the chain: its ADD ends a second after bridge made the veth and took the address.
  plugin("slow", "#!/bin/sh\necho \"$CNI_COMMAND\" >> " + (plugins_ / "slow.log") + R"(
if [ "$CNI_COMMAND" = ADD ]; then
  sleep 1
  exec python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["prevResult"]))'
fi
cat >/dev/null
)");
  net->write_conflist({R"({"type": "slow"})"});
  auto& d = daemon_on(net);
  CriClient cri(d);
  // runc refuses the pause's spec within milliseconds: long before the ADD ends.
  TempDir dir;
  write_file(dir / "bad.json", R"({"defaultAction":"SCMP_ACT_NO_SUCH_ACTION"})");
  auto c = test_pod("pause-fails");
  c.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(v1::SecurityProfile::Localhost);
  c.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_localhost_ref(dir / "bad.json");
  std::string id;
  grpc::Status s = cri.run_pod(c, &id);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("runc"), std::string::npos) << s.error_message();
  EXPECT_EQ(read_file(plugins_ / "slow.log"), "ADD\nDEL\n");
  expect_nothing_left(cri, d, *net);
}

// CNI ADD starts with the sandbox's record, before the netns exists: it records its intent and
// waits for the pin. When the pin cannot be made (here the netns dir is a read-only tmpfs), the
// ADD is called off before any plugin runs and its intent is dropped: no plugin is exec'd at all.
TEST_F(Network, NetnsThatCannotBeMadeCallsTheAddOffBeforeAnyPlugin) {
  auto net = std::make_shared<TestNetwork>();
  plugin("logged", "#!/bin/sh\necho \"$CNI_COMMAND\" >> " + (plugins_ / "logged.log") + R"(
[ "$CNI_COMMAND" = ADD ] && exec python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["prevResult"]))'
cat >/dev/null
)");
  net->write_conflist({R"({"type": "logged"})"});
  auto& d = daemon_on(net);
  CriClient cri(d);
  const std::string netns_dir = d.state() + "/netns";
  ASSERT_EQ(::mount("tmpfs", netns_dir.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k"), 0)
      << strerror(errno);
  struct Unmount {
    std::string dir;
    ~Unmount() {
      if (!dir.empty()) ::umount2(dir.c_str(), MNT_DETACH);
    }
  } unmount{netns_dir};
  std::string id;
  grpc::Status s = cri.run_pod(test_pod("no-netns"), &id);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("pin netns"), std::string::npos) << s.error_message();
  EXPECT_FALSE(fs::exists(plugins_ / "logged.log")) << read_file(plugins_ / "logged.log");
  EXPECT_TRUE(!fs::exists(d.root() + "/cni/results") || fs::is_empty(d.root() + "/cni/results"));
  EXPECT_TRUE(net->allocated_ips().empty());
  EXPECT_TRUE(net->veths().empty());
  // The undo cannot remove the pin's (absent) file from a read-only dir either, so the sandbox is
  // listed NOTREADY for kubelet to remove, as any undo that could not finish.
  ::umount2(netns_dir.c_str(), MNT_DETACH);
  unmount.dir.clear();
  for (const auto& p : cri.list_pods()) {
    EXPECT_EQ(p.state(), v1::SANDBOX_NOTREADY);
    EXPECT_TRUE(cri.remove_pod(p.id()).ok());
  }
  expect_nothing_left(cri, d, *net);
  EXPECT_FALSE(fs::exists(plugins_ / "logged.log")) << read_file(plugins_ / "logged.log");
  // The same daemon makes the next pod whole.
  s = cri.run_pod(test_pod("after"), &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(read_file(plugins_ / "logged.log"), "ADD\n");
  ASSERT_TRUE(cri.stop_pod(id).ok());
  ASSERT_TRUE(cri.remove_pod(id).ok());
  expect_nothing_left(cri, d, *net);
}

TEST_F(Network, TextFileBusyIsRetriedAndThePodComesUp) {
  auto net = std::make_shared<TestNetwork>();
  fs::copy_file("/usr/lib/cni/bridge", plugins_ / "bridge");
  auto& d = daemon_on(net);
  CriClient cri(d);
  // An installer is still writing the plugin when ADD runs; it finishes 400 ms later.
  int writer = ::open((plugins_ / "bridge").c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  auto run = std::async(std::launch::async, [&] {
    std::string id;
    grpc::Status s = cri.run_pod(test_pod("busy"), &id);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return id;
  });
  std::this_thread::sleep_for(400ms);
  ::close(writer);
  std::string id = run.get();
  EXPECT_NE(
      d.log().find("plugin bridge (ADD) for " + id + ": exec " + (plugins_ / "bridge") + ": text file busy, retry 1"),
      std::string::npos)
      << d.log();
  EXPECT_FALSE(pod_ip(cri, id).empty());
  ASSERT_TRUE(cri.remove_pod(id).ok());
  expect_nothing_left(cri, d, *net);
}

TEST_F(Network, PluginThatStaysBusyFailsEveryCallAndNeverSkipsTheRelease) {
  auto net = std::make_shared<TestNetwork>();
  fs::copy_file("/usr/lib/cni/bridge", plugins_ / "bridge");
  auto& d = daemon_on(net);
  CriClient cri(d);
  std::string id;
  ASSERT_TRUE(cri.run_pod(test_pod("stuck"), &id).ok());
  std::string ip = pod_ip(cri, id);
  int writer = ::open((plugins_ / "bridge").c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  // DEL cannot run bridge (and so host-local): the stop fails instead of pretending it released.
  grpc::Status stop = cri.stop_pod(id);
  EXPECT_FALSE(stop.ok());
  EXPECT_NE(stop.error_message().find("plugin bridge (DEL)"), std::string::npos) << stop.error_message();
  EXPECT_NE(stop.error_message().find("the plugin did not run"), std::string::npos) << stop.error_message();
  EXPECT_EQ(net->allocated_ips(), std::vector<std::string>{ip});
  // A new pod cannot be set up either while the plugin stays busy. Its undo cannot run DEL
  // either, so (as containerd does) the failed sandbox stays listed NOTREADY for kubelet to stop
  // and remove, instead of vanishing with its network still set up.
  std::string other;
  grpc::Status run = cri.run_pod(test_pod("stuck-too"), &other);
  EXPECT_FALSE(run.ok());
  EXPECT_NE(run.error_message().find("plugin bridge (ADD)"), std::string::npos) << run.error_message();
  auto pods = cri.list_pods();
  ASSERT_EQ(pods.size(), 2u);
  std::string failed = pods[0].id() == id ? pods[1].id() : pods[0].id();
  for (const auto& p : pods) EXPECT_EQ(p.state(), p.id() == id ? v1::SANDBOX_READY : v1::SANDBOX_NOTREADY);
  EXPECT_NE(d.log().find("sandbox " + failed + ": release step 'network' failed"), std::string::npos) << d.log();
  ::close(writer);
  ASSERT_TRUE(cri.stop_pod(id).ok());
  ASSERT_TRUE(cri.remove_pod(id).ok());
  ASSERT_TRUE(cri.remove_pod(failed).ok());
  expect_nothing_left(cri, d, *net);
}

TEST_F(Network, ConfDirIsWatchedAndNetworkReadyFlipsBothWays) {
  auto& d = daemon({.test_network = false});
  CriClient cri(d);
  std::string msg;
  ASSERT_TRUE(wait_network_ready(cri, false, &msg));
  EXPECT_NE(msg.find("NetworkPluginNotReady: no valid CNI network config in " + d.dir() + "/cni-conf"),
            std::string::npos)
      << msg;
  // Host-network pods never need CNI; the others fail cleanly without a network.
  auto host = test_pod("hostnet");
  host.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(v1::NODE);
  std::string id;
  ASSERT_TRUE(cri.run_pod(host, &id).ok());
  ASSERT_TRUE(cri.remove_pod(id).ok());
  grpc::Status no_net = cri.run_pod(test_pod("no-net"), &id);
  EXPECT_EQ(no_net.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << no_net.error_message();
  EXPECT_TRUE(cri.list_pods().empty());
  EXPECT_TRUE(fs::is_empty(d.state() + "/netns"));

  TestNetwork net;
  std::string conf = d.dir() + "/cni-conf/50-test.conflist";
  write_file(conf, net.conflist());
  ASSERT_TRUE(wait_network_ready(cri, true, &msg)) << msg;
  // A lexically earlier config naming a plugin that does not exist wins and is not ready.
  write_file(d.dir() + "/cni-conf/10-missing.conflist",
             R"({"cniVersion":"1.0.0","name":"missing","plugins":[{"type":"no-such-plugin"}]})");
  ASSERT_TRUE(wait_network_ready(cri, false, &msg));
  EXPECT_NE(msg.find("no-such-plugin"), std::string::npos) << msg;
  fs::remove(d.dir() + "/cni-conf/10-missing.conflist");
  ASSERT_TRUE(wait_network_ready(cri, true, &msg)) << msg;
  fs::remove(conf);
  ASSERT_TRUE(wait_network_ready(cri, false, &msg));
}

TEST_F(Network, NetworkReadyFollowsThePluginBinariesWithoutAConfDirChange) {
  auto net = std::make_shared<TestNetwork>();
  plugin("passer", "#!/bin/sh\ncat >/dev/null\necho '{\"cniVersion\":\"1.0.0\"}'\n");
  net->write_conflist({R"({"type": "passer"})"});
  auto& d = daemon_on(net);
  CriClient cri(d);
  std::string msg;
  ASSERT_TRUE(wait_network_ready(cri, true, &msg)) << msg;
  // An installer removes the binary, then puts it back; the conf dir never changes.
  fs::rename(plugins_ / "passer", plugins_ / "passer.away");
  ASSERT_TRUE(wait_network_ready(cri, false, &msg)) << msg;
  EXPECT_NE(msg.find("NetworkPluginNotReady: network " + net->name()), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs plugins not found in " + plugins_.path() + ":/usr/lib/cni: passer"), std::string::npos)
      << msg;
  fs::rename(plugins_ / "passer.away", plugins_ / "passer");
  ASSERT_TRUE(wait_network_ready(cri, true, &msg)) << msg;
}

TEST_F(Network, CorruptResultCacheEntryDoesNotWedgeStopAndRemove) {
  auto& d = daemon();
  CriClient cri(d);
  TestNetwork& net = *d.network();
  std::string id;
  ASSERT_TRUE(cri.run_pod(test_pod("corrupt"), &id).ok());
  ASSERT_EQ(net.allocated_ips().size(), 1u);
  std::vector<fs::path> entries;
  for (const auto& f : fs::directory_iterator(d.root() + "/cni/results")) entries.push_back(f.path());
  ASSERT_EQ(entries.size(), 1u);
  std::string text = read_file(entries[0]);
  text[text.find("K8S_POD_NAME=corrupt") + 13] = 'X';  // one changed byte: a checksum mismatch
  write_file(entries[0], text);
  // DEL runs with the current network config instead (host-local releases by container id).
  grpc::Status stop = cri.stop_pod(id);
  ASSERT_TRUE(stop.ok()) << stop.error_message();
  EXPECT_NE(d.log().find("corrupt result cache entry of " + id), std::string::npos) << d.log();
  EXPECT_TRUE(net.allocated_ips().empty());
  grpc::Status remove = cri.remove_pod(id);
  ASSERT_TRUE(remove.ok()) << remove.error_message();
  expect_nothing_left(cri, d, net);
}

TEST_F(Network, BadBandwidthAnnotationFailsOnlyANetworkThatShapesTraffic) {
  auto bad = test_pod("shaped");
  (*bad.mutable_annotations())["kubernetes.io/ingress-bandwidth"] = "fast";
  {
    // bridge + portmap: nobody reads the annotation.
    auto& d = daemon();
    CriClient cri(d);
    std::string id;
    grpc::Status s = cri.run_pod(bad, &id);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_TRUE(cri.remove_pod(id).ok());
  }
  auto net = std::make_shared<TestNetwork>();
  net->write_conflist({R"({"type": "bandwidth", "capabilities": {"bandwidth": true}})"});
  auto& d = daemon_on(net);
  CriClient cri(d);
  std::string id;
  grpc::Status s = cri.run_pod(bad, &id);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("kubernetes.io/ingress-bandwidth"), std::string::npos) << s.error_message();
  expect_nothing_left(cri, d, *net);
}

TEST_F(Network, DelUsesTheCachedConfigAfterTheConfDirChanged) {
  auto net = std::make_shared<TestNetwork>();
  auto& d = daemon_on(net);
  CriClient cri(d);
  std::string id;
  ASSERT_TRUE(cri.run_pod(test_pod("cached"), &id).ok());
  ASSERT_EQ(net->allocated_ips().size(), 1u);
  // The network is replaced by another one: DEL must still release in the first.
  TestNetwork other;
  for (const auto& f : fs::directory_iterator(net->conf_dir())) fs::remove(f.path());
  write_file(net->conf_dir() + "/20-other.conflist", other.conflist());
  std::string msg;
  ASSERT_TRUE(wait_network_ready(cri, true, &msg)) << msg;
  ASSERT_TRUE(cri.stop_pod(id).ok());
  EXPECT_TRUE(net->allocated_ips().empty());
  EXPECT_TRUE(net->veths().empty());
  EXPECT_TRUE(other.allocated_ips().empty());
  ASSERT_TRUE(cri.remove_pod(id).ok());
}

TEST_F(Network, DelAfterARestartAndWithTheNetnsGone) {
  auto net = std::make_shared<TestNetwork>();
  TempDir& shared = scratch();
  std::string root = shared / "root", state = shared / "state";
  std::string toml = "cni_conf_dir = \"" + net->conf_dir() + "\"\n";
  std::string kept, gone, orphan, ip_kept;
  {
    DaemonProcess& d = daemon_at({.config_toml = toml, .network = net}, shared / "a.sock", root, state);
    CriClient cri(d);
    ASSERT_TRUE(cri.run_pod(test_pod("kept"), &kept).ok());
    ASSERT_TRUE(cri.run_pod(test_pod("gone"), &gone).ok());
    ASSERT_TRUE(cri.run_pod(test_pod("orphan"), &orphan).ok());
    ip_kept = pod_ip(cri, kept);
    d.stop(SIGKILL);
  }
  ASSERT_EQ(net->allocated_ips().size(), 3u);
  // A sandbox whose record went while its network stayed (no checkpoint, no pause): released at start.
  shell("runc --root " + state + "/runtime/runc delete -f " + orphan);
  fs::remove(root + "/sandboxes/" + orphan + ".json");
  // A node reboot for one pod: its pause is dead and its netns pin gone.
  std::string pin = state + "/netns/" + gone;
  shell("runc --root " + state + "/runtime/runc kill " + gone + " KILL");
  ::umount2(pin.c_str(), MNT_DETACH);
  fs::remove(pin);
  for (const auto& f : fs::directory_iterator(net->conf_dir())) fs::remove(f.path());

  DaemonProcess& d = daemon_at({.config_toml = toml, .network = net}, shared / "b.sock", root, state);
  CriClient cri(d);
  EXPECT_EQ(pod_ip(cri, kept), ip_kept);  // recovered from the result cache
  // The orphan's network is released by recovery's background work, once berthd serves.
  for (int i = 0; i < 500 && net->allocated_ips().size() != 2u; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(net->allocated_ips().size(), 2u) << d.log();
  ASSERT_TRUE(cri.stop_pod(gone).ok());
  EXPECT_EQ(net->allocated_ips(), std::vector<std::string>{ip_kept});
  ASSERT_TRUE(cri.stop_pod(kept).ok());
  EXPECT_TRUE(net->allocated_ips().empty());
  EXPECT_TRUE(net->veths().empty());
  ASSERT_TRUE(cri.remove_pod(kept).ok());
  ASSERT_TRUE(cri.remove_pod(gone).ok());
}

// A chained plugin that records what it was given and passes prevResult on.
const char* kRecorder = R"(#!/usr/bin/env python3
import json, os, sys
conf = json.load(sys.stdin)
rec = {k: os.environ.get(k, "") for k in ("CNI_COMMAND", "CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_ARGS", "CNI_PATH")}
rec["conf"] = conf
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorded.jsonl"), "a") as f:
    f.write(json.dumps(rec) + "\n")
if rec["CNI_COMMAND"] == "ADD":
    print(json.dumps(conf.get("prevResult", {"cniVersion": conf["cniVersion"]})))
)";

TEST_F(Network, PluginsGetTheCniEnvironmentPrevResultAndTheirCapabilities) {
  auto net = std::make_shared<TestNetwork>();
  plugin("recorder", kRecorder);
  net->write_conflist({R"({"type": "recorder", "capabilities": {"portMappings": true, "dns": true, "bandwidth": true,
                           "io.kubernetes.cri.pod-annotations": true}})"});
  auto& d = daemon_on(net);
  CriClient cri(d);
  auto c = test_pod("args");
  c.mutable_dns_config()->add_servers("10.96.0.10");
  c.mutable_dns_config()->add_searches("svc.cluster.local");
  (*c.mutable_annotations())["kubernetes.io/ingress-bandwidth"] = "10M";
  (*c.mutable_annotations())["team"] = "blue";
  auto* pm = c.add_port_mappings();
  pm->set_container_port(80);
  pm->set_host_port(free_loopback_port());
  std::string id;
  grpc::Status s = cri.run_pod(c, &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(cri.stop_pod(id).ok());
  std::vector<json> recs;
  std::istringstream lines(read_file(plugins_ / "recorded.jsonl"));
  for (std::string l; std::getline(lines, l);) recs.push_back(json::parse(l));
  ASSERT_EQ(recs.size(), 2u);
  const json& add = recs[0];
  EXPECT_EQ(add["CNI_COMMAND"], "ADD");
  EXPECT_EQ(add["CNI_CONTAINERID"], id);
  EXPECT_EQ(add["CNI_NETNS"], d.state() + "/netns/" + id);
  EXPECT_EQ(add["CNI_IFNAME"], "eth0");
  EXPECT_EQ(add["CNI_ARGS"],
            "IgnoreUnknown=1;K8S_POD_NAMESPACE=berth-test;K8S_POD_NAME=args;K8S_POD_INFRA_CONTAINER_ID=" + id +
                ";K8S_POD_UID=uid-args");
  EXPECT_EQ(add["CNI_PATH"], plugins_.path() + ":/usr/lib/cni");
  EXPECT_EQ(add["conf"]["name"], net->name());
  EXPECT_EQ(add["conf"]["cniVersion"], "1.0.0");
  ASSERT_TRUE(add["conf"].contains("prevResult"));  // bridge's result, passed through portmap
  EXPECT_EQ(add["conf"]["prevResult"]["ips"][0]["address"].get<std::string>().rfind(net->subnet_prefix(), 0), 0u);
  const json& rc = add["conf"]["runtimeConfig"];
  EXPECT_EQ(rc["dns"]["servers"][0], "10.96.0.10");
  EXPECT_EQ(rc["bandwidth"]["ingressRate"], 10000000u);
  EXPECT_EQ(rc["io.kubernetes.cri.pod-annotations"]["team"], "blue");
  EXPECT_EQ(rc["portMappings"][0]["containerPort"], 80);
  // DEL runs in reverse order, so the last plugin goes first, with the cached prevResult.
  const json& del = recs[1];
  EXPECT_EQ(del["CNI_COMMAND"], "DEL");
  EXPECT_EQ(del["conf"]["prevResult"], add["conf"]["prevResult"]);
  ASSERT_TRUE(cri.remove_pod(id).ok());
}

// A whole network of one plugin that answers ADD with a fixed dual-stack result in a given version.
std::string fixed_result_plugin(const std::string& version) {
  std::string result;
  if (version == "0.3.1")
    result =
        R"({"cniVersion":"0.3.1","ips":[{"version":"6","address":"fd00:be7::5/64"},{"version":"4","address":"10.254.3.5/24"}]})";
  else
    result =
        R"({"cniVersion":")" + version +
        R"(","interfaces":[{"name":"eth0"}],"ips":[{"address":"fd00:be7::5/64","interface":0},{"address":"10.254.3.5/24","interface":0}]})";
  return "#!/bin/sh\ncat >/dev/null\n[ \"$CNI_COMMAND\" = ADD ] || exit 0\necho '" + result + "'\n";
}

TEST_F(Network, ResultsOfEveryCniVersionGiveDualStackPodIps) {
  for (const std::string version : {"0.3.1", "0.4.0", "1.0.0"}) {
    SCOPED_TRACE(version);
    TempDir conf;
    plugin("fixed", fixed_result_plugin(version));
    write_file(conf / "10-fixed.conflist",
               R"({"cniVersion":")" + version + R"(","name":"fixed","plugins":[{"type":"fixed"}]})");
    auto& d = daemon({.config_toml = "cni_conf_dir = \"" + conf.path() + "\"\n" + plugin_dirs_toml()});
    CriClient cri(d);
    std::string id;
    grpc::Status s = cri.run_pod(test_pod("v" + version), &id);
    ASSERT_TRUE(s.ok()) << s.error_message();
    v1::PodSandboxStatusResponse st;
    ASSERT_TRUE(cri.pod_status(id, &st).ok());
    EXPECT_EQ(st.status().network().ip(), "10.254.3.5");
    ASSERT_EQ(st.status().network().additional_ips_size(), 1);
    EXPECT_EQ(st.status().network().additional_ips(0).ip(), "fd00:be7::5");
    ASSERT_TRUE(cri.remove_pod(id).ok());
  }
}

// A verbose PodSandboxStatus (crictl inspectp) answers from memory: no CNI CHECK per call. The
// CHECK runs when berthd recovers the pod, where a change made while it was down shows.
TEST_F(Network, VerboseStatusRunsNoCheckRecoveryDoesAndUpdateRuntimeConfigKeepsThePodCidr) {
  auto& d = daemon();
  std::string id;
  ASSERT_TRUE(CriClient(d).run_pod(test_pod("checked"), &id).ok());
  auto network_check = [&](std::string* out) {
    v1::PodSandboxStatusResponse st;
    if (!CriClient(d).pod_status(id, &st).ok()) return false;
    json info = json::parse(st.info().at("info"));
    if (!info.contains("network_check")) return false;
    *out = info["network_check"];
    return true;
  };
  // The recovery's CHECK runs in the background: a while after berthd serves again.
  auto checked = [&](std::string* out, bool want_failure) {
    for (int i = 0; i < 300; ++i) {
      if (network_check(out) && (*out != "ok") == want_failure) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  std::string check;
  EXPECT_FALSE(network_check(&check)) << check;
  d.stop(SIGKILL);
  ASSERT_TRUE(d.start()) << d.log();
  ASSERT_TRUE(checked(&check, false)) << check << d.log();
  // The pod's interface disappears while berthd is down: the recovery's CHECK says so.
  d.stop(SIGKILL);
  shell("nsenter --net=" + d.state() + "/netns/" + id + " ip link del eth0");
  ASSERT_TRUE(d.start()) << d.log();
  ASSERT_TRUE(checked(&check, true)) << check;
  EXPECT_NE(check.find("plugin bridge (CHECK)"), std::string::npos) << check;
  EXPECT_NE(d.log().find("CNI CHECK after recovery"), std::string::npos);

  CriClient cri(d);
  ASSERT_TRUE(cri.update_runtime_config("10.244.3.0/24").ok());
  v1::StatusResponse status;
  ASSERT_TRUE(cri.status(&status, true).ok());
  json network = json::parse(status.info().at("network"));
  EXPECT_EQ(network["pod_cidr"], "10.244.3.0/24");
  EXPECT_EQ(network["ready"], true);
  grpc::Status bad = cri.update_runtime_config("10.244.3.0/40");
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("pod_cidr"), std::string::npos);
  ASSERT_TRUE(cri.remove_pod(id).ok());
}

}  // namespace
}  // namespace berth::test
