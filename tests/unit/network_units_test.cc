// network/ pieces on their own: config files and the conf dir scan, result parsing in every CNI
// version's form, capability arguments, pod CIDRs, and plugin exec (errors, timeouts and the
// ETXTBSY retry) with small plugin scripts written by the tests.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "berth/cni_manager.h"
#include "berth/test/temp_dir.h"
#include "capability_args.h"
#include "cni_result.h"
#include "network_config.h"
#include "plugin_exec.h"
#include "result_cache.h"

namespace berth::cni {
namespace {

using berth::test::TempDir;
using berth::test::write_file;
using nlohmann::json;

TEST(NetworkConfig, SingleConfIsWrappedAsAOnePluginList) {
  auto n = parse_network_config_file(R"({"cniVersion":"0.4.0","name":"one","type":"bridge","bridge":"b0"})", "/x/10.conf");
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n->name, "one");
  EXPECT_EQ(n->cni_version, "0.4.0");
  ASSERT_EQ(n->plugins().size(), 1u);
  EXPECT_EQ(n->plugins()[0]["bridge"], "b0");
  EXPECT_EQ(n->plugin_types(), std::vector<std::string>{"bridge"});
}

TEST(NetworkConfig, InvalidConfigsAreRefusedWithTheReason) {
  struct Case {
    const char* text;
    const char* file;
    const char* why;
  } cases[] = {
      {"{", "a.conflist", "not valid JSON"},
      {R"({"cniVersion":"1.0.0","name":"n","type":"bridge"})", "a.conflist", "needs \"plugins\""},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"x"}]})", "a.conf", "use .conflist"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[]})", "a.conflist", "non-empty array"},
      {R"({"cniVersion":"1.0.0","plugins":[{"type":"x"}]})", "a.conflist", "missing string \"name\""},
      {R"({"name":"n","plugins":[{"type":"x"}]})", "a.conflist", "cniVersion"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[{"bridge":"x"}]})", "a.conflist", "plugins[0]: missing string \"type\""},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"../sh"}]})", "a.conflist", "plain file name"},
      {R"({"cniVersion":"1.0.0","name":"a/b","plugins":[{"type":"x"}]})", "a.conflist", "may only hold"},
  };
  for (const auto& c : cases) {
    auto n = parse_network_config_file(c.text, c.file);
    ASSERT_FALSE(n.ok()) << c.text;
    EXPECT_NE(n.status().message().find(c.why), std::string::npos) << c.text << " -> " << n.status().message();
  }
}

TEST(NetworkConfig, ScanTakesTheLexicallyFirstValidFileAndSkipsInvalidOnes) {
  TempDir dir;
  write_file(dir / "05-broken.conflist", "{ nope");
  write_file(dir / "10-second.conf", R"({"cniVersion":"1.0.0","name":"second","type":"bridge"})");
  write_file(dir / "20-third.conflist", R"({"cniVersion":"1.0.0","name":"third","plugins":[{"type":"bridge"}]})");
  write_file(dir / "00-ignored.txt", "not a network config");
  auto scan = scan_conf_dir(dir.path());
  ASSERT_TRUE(scan.network.has_value()) << scan.error;
  EXPECT_EQ(scan.network->name, "second");
  EXPECT_EQ(scan.network->file, dir / "10-second.conf");
  ASSERT_EQ(scan.skipped.size(), 1u);
  EXPECT_NE(scan.skipped[0].find("05-broken.conflist"), std::string::npos);

  TempDir empty;
  auto none = scan_conf_dir(empty.path());
  EXPECT_FALSE(none.network.has_value());
  EXPECT_NE(none.error.find("no network config found"), std::string::npos);
  auto missing = scan_conf_dir(empty / "nope");
  EXPECT_FALSE(missing.network.has_value());
  EXPECT_NE(missing.error.find("No such file"), std::string::npos) << missing.error;
}

TEST(NetworkConfig, VersionsCompareNumerically) {
  EXPECT_LT(compare_cni_versions("0.3.1", "0.4.0"), 0);
  EXPECT_LT(compare_cni_versions("0.4.0", "1.0.0"), 0);
  EXPECT_EQ(compare_cni_versions("1.0", "1.0.0"), 0);
  EXPECT_GT(compare_cni_versions("0.10.0", "0.9.0"), 0);
}

TEST(CniResult, AddressesOfEveryVersionIPv4First) {
  // 1.0.0 and 0.4.0 / 0.3.x share "ips" (0.3.x adds "version"); 0.2.0 has ip4/ip6.
  json v100 = json::parse(R"({"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],
      "ips":[{"address":"fd00::5/64","gateway":"fd00::1","interface":0},{"address":"10.1.2.5/24","interface":0}]})");
  json v031 = json::parse(R"({"cniVersion":"0.3.1","ips":[{"version":"4","address":"10.1.2.6/24"}]})");
  json v020 = json::parse(R"({"cniVersion":"0.2.0","ip4":{"ip":"10.1.2.7/24"},"ip6":{"ip":"fd00::7/64"}})");
  EXPECT_EQ(*result_ips(v100), (std::vector<std::string>{"10.1.2.5", "fd00::5"}));
  EXPECT_EQ(*result_ips(v031), std::vector<std::string>{"10.1.2.6"});
  EXPECT_EQ(*result_ips(v020), (std::vector<std::string>{"10.1.2.7", "fd00::7"}));
  EXPECT_FALSE(result_ips(json::parse(R"({"ips":[{"address":"banana"}]})")).ok());
  EXPECT_FALSE(result_ips(json::parse(R"({"ips":{}})")).ok());
  EXPECT_TRUE(result_ips(json::parse(R"({"cniVersion":"1.0.0"})"))->empty());
}

TEST(CapabilityArgs, PortsDnsBandwidthAndAnnotations) {
  PodNetworkRequest r;
  r.port_mappings = {{"tcp", 80, 8080, ""}, {"udp", 53, 0, ""}, {"sctp", 9, 9009, "127.0.0.1"}};
  r.dns = {{"10.0.0.10"}, {"svc.cluster.local"}, {"ndots:5"}};
  r.annotations = {{"kubernetes.io/ingress-bandwidth", "1M"}, {"kubernetes.io/egress-bandwidth", "2Mi"}, {"team", "a"}};
  auto caps = capability_args(r);
  ASSERT_TRUE(caps.ok()) << caps.status().message();
  json ports = (*caps)["portMappings"];
  ASSERT_EQ(ports.size(), 2u);  // a port without hostPort is not published
  EXPECT_EQ(ports[0], json::parse(R"({"hostPort":8080,"containerPort":80,"protocol":"tcp"})"));
  EXPECT_EQ(ports[1]["hostIP"], "127.0.0.1");
  EXPECT_EQ((*caps)["dns"]["servers"][0], "10.0.0.10");
  EXPECT_EQ((*caps)["bandwidth"]["ingressRate"], 1000000u);
  EXPECT_EQ((*caps)["bandwidth"]["egressRate"], 2097152u);
  EXPECT_EQ((*caps)["io.kubernetes.cri.pod-annotations"]["team"], "a");

  // Each plugin gets only what it asked for.
  json plugin = json::parse(R"({"type":"portmap","capabilities":{"portMappings":true,"bandwidth":false,"mystery":true}})");
  json rc = runtime_config_for(plugin, *caps);
  EXPECT_TRUE(rc.contains("portMappings"));
  EXPECT_FALSE(rc.contains("bandwidth"));
  EXPECT_FALSE(rc.contains("mystery"));
  EXPECT_TRUE(runtime_config_for(json::parse(R"({"type":"bridge"})"), *caps).empty());

  r.annotations = {{"kubernetes.io/ingress-bandwidth", "fast"}};
  auto bad = capability_args(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kubernetes.io/ingress-bandwidth"), std::string::npos);
  EXPECT_EQ(*parse_bandwidth("10k"), 10000u);
  EXPECT_EQ(*parse_bandwidth("1Gi"), 1073741824u);
  EXPECT_FALSE(parse_bandwidth("-5M").ok());
  EXPECT_FALSE(parse_bandwidth("5X").ok());
}

TEST(PodCidr, ValidAndInvalid) {
  EXPECT_TRUE(validate_pod_cidr("10.244.1.0/24").ok());
  EXPECT_TRUE(validate_pod_cidr("10.244.1.0/24,fd00:10:244:1::/64").ok());
  for (const char* bad : {"10.244.1.0", "10.244.1.0/33", "banana/8", "10.0.0.0/24,", "fd00::/129"}) {
    Status s = validate_pod_cidr(bad);
    EXPECT_EQ(s.code(), Code::invalid_argument) << bad;
    EXPECT_NE(s.message().find("pod_cidr"), std::string::npos) << bad;
  }
}

TEST(ResultCache, RoundTripFindAndChecksum) {
  TempDir dir;
  ResultCache cache(dir.path());
  CacheEntry e{"abc", "eth0", "net1", json::parse(R"({"name":"net1","plugins":[{"type":"bridge"}]})"), "K=V",
               json::object(), "/run/netns/x", json::parse(R"({"ips":[]})")};
  ASSERT_TRUE(cache.save(e).ok());
  auto found = cache.find("abc", "eth0");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->config, e.config);
  EXPECT_EQ((*found)->cni_args, "K=V");
  EXPECT_FALSE(cache.find("abd", "eth0")->has_value());
  // One changed byte: the entry is refused, not trusted.
  std::string text = berth::test::read_file(cache.path_of(e));
  text[text.find("K=V")] = 'Q';
  write_file(cache.path_of(e), text);
  auto corrupt = cache.find("abc", "eth0");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find("checksum"), std::string::npos);
  ASSERT_TRUE(cache.remove(e).ok());
  EXPECT_FALSE(cache.find("abc", "eth0")->has_value());
}

// A plugin script in a temp dir.
class PluginExec : public ::testing::Test {
 protected:
  void plugin(const std::string& name, const std::string& body) { write_file(dir_ / name, "#!/bin/sh\n" + body, 0755); }
  ExecSettings settings(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return {{dir_.path()}, timeout, std::chrono::milliseconds(1500), &observer_};
  }
  PluginCall call(const std::string& type, const std::string& command = "ADD") {
    return {command, type, "cid", "/run/netns/x", "eth0", "IgnoreUnknown=1;K8S_POD_NAME=p", R"({"cniVersion":"1.0.0"})"};
  }
  TempDir dir_;
  int runs_ = 0, busy_ = 0;
  ExecObserver observer_{[this](const std::string&, const std::string&, double, bool) { ++runs_; },
                         [this](const std::string&) { ++busy_; }};
};

TEST_F(PluginExec, EnvironmentAndStdinFollowTheCniProtocol) {
  plugin("echoer", "cat > " + (dir_ / "stdin") + "; env > " + (dir_ / "env") + "; echo '{\"cniVersion\":\"1.0.0\"}'\n");
  auto out = exec_plugin(settings(), call("echoer"));
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out, "{\"cniVersion\":\"1.0.0\"}\n");
  std::string env = berth::test::read_file(dir_ / "env");
  for (const char* want : {"CNI_COMMAND=ADD", "CNI_CONTAINERID=cid", "CNI_NETNS=/run/netns/x", "CNI_IFNAME=eth0",
                           "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAME=p"})
    EXPECT_NE(env.find(want), std::string::npos) << want;
  EXPECT_NE(env.find("CNI_PATH=" + dir_.path()), std::string::npos);
  EXPECT_NE(env.find("PATH="), std::string::npos);  // portmap needs iptables from PATH
  EXPECT_EQ(berth::test::read_file(dir_ / "stdin"), R"({"cniVersion":"1.0.0"})");
  EXPECT_EQ(runs_, 1);
}

TEST_F(PluginExec, CniErrorReachesTheCallerVerbatim) {
  plugin("failer", "echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"no more addresses\",\"details\":\"range 10.0.0.0/30 is full\"}'\nexit 1\n");
  auto out = exec_plugin(settings(), call("failer"));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("plugin failer (ADD): no more addresses; range 10.0.0.0/30 is full (cni error code 11)"),
            std::string::npos)
      << out.status().message();
  plugin("plain", "echo 'it broke' >&2\nexit 3\n");
  auto plain = exec_plugin(settings(), call("plain"));
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("it broke"), std::string::npos) << plain.status().message();
  EXPECT_NE(plain.status().message().find("exit status 3"), std::string::npos) << plain.status().message();
}

TEST_F(PluginExec, MissingPluginNamesTheDirs) {
  auto out = exec_plugin(settings(), call("nowhere"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::not_found);
  EXPECT_NE(out.status().message().find("plugin nowhere not found in " + dir_.path()), std::string::npos);
}

TEST_F(PluginExec, HungPluginIsKilledAtTheTimeout) {
  plugin("hang", "echo $$ > " + (dir_ / "pid") + "\nexec sleep 60\n");
  auto out = exec_plugin(settings(std::chrono::milliseconds(300)), call("hang"));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::deadline_exceeded);
  EXPECT_NE(out.status().message().find("timed out"), std::string::npos);
  int pid = std::stoi(berth::test::read_file(dir_ / "pid"));
  EXPECT_NE(::kill(pid, 0), 0);  // gone, not left sleeping
}

TEST_F(PluginExec, BusyBinaryIsRetriedUntilReleased) {
  plugin("busy", "echo '{}'\n");
  int writer = ::open((dir_ / "busy").c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  std::thread release([writer] {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    ::close(writer);
  });
  auto out = exec_plugin(settings(), call("busy"));
  release.join();
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_GT(busy_, 0);
  EXPECT_EQ(runs_, 1);
}

TEST_F(PluginExec, BinaryThatStaysBusyFailsAndNeverReportsSuccess) {
  plugin("stuck", "echo '{}'\n");
  int writer = ::open((dir_ / "stuck").c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  for (const char* command : {"ADD", "DEL"}) {
    auto out = exec_plugin(settings(), call("stuck", command));
    ASSERT_FALSE(out.ok()) << command;
    EXPECT_EQ(out.status().sys_errno(), ETXTBSY);
    EXPECT_NE(out.status().message().find(std::string("plugin stuck (") + command + ")"), std::string::npos);
    EXPECT_NE(out.status().message().find("the plugin did not run"), std::string::npos);
  }
  ::close(writer);
  EXPECT_EQ(runs_, 0);
  EXPECT_GT(busy_, 2);
}

}  // namespace
}  // namespace berth::cni
