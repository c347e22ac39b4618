// network/ pieces on their own: config files and the conf dir scan, result parsing in every CNI
// version's form, capability arguments, pod CIDRs, plugin exec (errors, timeouts and the ETXTBSY
// retry) and CniManager's readiness, rollback and cache recovery, with small plugin scripts
// written by the tests.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
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
  auto n =
      parse_network_config_file(R"({"cniVersion":"0.4.0","name":"one","type":"bridge","bridge":"b0"})", "/x/10.conf");
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
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[]})", "a.conflist", "field 'plugins': must not be empty"},
      {R"({"cniVersion":"1.0.0","plugins":[{"type":"x"}]})", "a.conflist", "field 'name': missing"},
      {R"({"name":"n","plugins":[{"type":"x"}]})", "a.conflist", "cniVersion"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[{"bridge":"x"}]})", "a.conflist",
       "field 'plugins[0].type': missing"},
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

// Conf files are outside input: any member of the wrong type makes the file invalid (skipped by
// the scan with the reason), never an exception.
TEST(NetworkConfig, WrongTypedMembersAreInvalidAndSkippedWithoutThrowing) {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {R"({"cniVersion":"1.0.0","name":"n","plugins":5})", "field 'plugins': type must be array, but is number"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":{"type":"x"}})",
       "field 'plugins': type must be array, but is object"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":"bridge"})", "field 'plugins': type must be array, but is string"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[5]})", "field 'plugins[0]': type must be object, but is number"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":7}]})",
       "field 'plugins[0].type': type must be string, but is number"},
      {R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"x","capabilities":[]}]})",
       "field 'plugins[0].capabilities': type must be object, but is array"},
      {R"({"cniVersion":1,"name":"n","plugins":[{"type":"x"}]})",
       "field 'cniVersion': type must be string, but is number"},
      {R"({"cniVersion":"1.0.0","name":["n"],"plugins":[{"type":"x"}]})",
       "field 'name': type must be string, but is array"},
      {R"({"cniVersion":"1.0.0","name":"n","disableCheck":1,"plugins":[{"type":"x"}]})",
       "\"disableCheck\" must be true or false"},
      {R"(5)", "not a JSON object"},
      {R"(["plugins"])", "not a JSON object"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    Result<NetworkConfigList> n = invalid_argument("not parsed");
    EXPECT_NO_THROW(n = parse_network_config_file(c.text, "a.json"));
    ASSERT_FALSE(n.ok());
    EXPECT_NE(n.status().message().find(c.why), std::string::npos) << n.status().message();
  }

  TempDir dir;
  write_file(dir / "05-plugins.conflist", R"({"cniVersion":"1.0.0","name":"bad","plugins":5})");
  write_file(dir / "06-types.conflist", R"({"cniVersion":"1.0.0","name":"bad","plugins":[{"type":{"x":1}}]})");
  write_file(dir / "07-scalar.json", "7");
  write_file(dir / "08-disabled.conflist", R"({"cniVersion":"1.0.0","name":"off","disabled":"yes","plugins":"x"})");
  write_file(dir / "10-good.conflist",
             R"({"cniVersion":"1.0.0","name":"good","disabled":"no","plugins":[{"type":"bridge"}]})");
  ConfDirScan scan;
  EXPECT_NO_THROW(scan = scan_conf_dir(dir.path()));
  ASSERT_TRUE(scan.network.has_value()) << scan.error;
  EXPECT_EQ(scan.network->name, "good");
  ASSERT_EQ(scan.skipped.size(), 4u);
  EXPECT_NE(scan.skipped[0].find("05-plugins.conflist: field 'plugins': type must be array, but is number"),
            std::string::npos)
      << scan.skipped[0];
  EXPECT_NE(scan.skipped[1].find("06-types.conflist: field 'plugins[0].type': type must be string, but is object"),
            std::string::npos)
      << scan.skipped[1];
  EXPECT_NE(scan.skipped[2].find("07-scalar.json: not a JSON object"), std::string::npos) << scan.skipped[2];
  EXPECT_NE(scan.skipped[3].find("08-disabled.conflist"), std::string::npos) << scan.skipped[3];
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

// A plugin's result is outside input: members of the wrong type are errors naming the member.
TEST(CniResult, WrongTypedMembersAreErrorsNamingThem) {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {R"({"ips":5})", "field 'ips': type must be array, but is number"},
      {R"({"ips":"10.0.0.1/24"})", "field 'ips': type must be array, but is string"},
      {R"({"interfaces":"x","ips":[{"address":"10.0.0.1/24"}]})",
       "field 'interfaces': type must be array, but is string"},
      {R"({"ips":[{"address":7}]})", "field 'ips[0].address': type must be string, but is number"},
      {R"({"ips":[{"address":"10.0.0.1/24"},{"address":null}]})",
       "field 'ips[1].address': type must be string, but is null"},
      {R"({"ips":[{"address":"10.0.0.1/24","interface":"eth0"}]})",
       "field 'ips[0].interface': type must be integer, but is string"},
      {R"({"ips":[5]})", "field 'ips[0]': type must be object, but is number"},
      {R"({"ips":[{"gateway":"10.0.0.1"}]})", "field 'ips[0].address': missing"},
      {R"({"ip4":"10.0.0.1/24"})", "field 'ip4': type must be object, but is string"},
      {R"({"ip6":{"ip":["fd00::1/64"]}})", "field 'ip6.ip': type must be string, but is array"},
      {R"([{"ips":[]}])", "not a JSON object"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    Result<std::vector<std::string>> ips = invalid_argument("not parsed");
    EXPECT_NO_THROW(ips = result_ips(json::parse(c.text)));
    ASSERT_FALSE(ips.ok());
    EXPECT_EQ(ips.status().code(), Code::invalid_argument);
    EXPECT_NE(ips.status().message().find(c.why), std::string::npos) << ips.status().message();
  }
  // Null is absence, as Go's omitempty leaves it.
  auto nulls =
      result_ips(json::parse(R"({"interfaces":null,"ip4":null,"ips":[{"address":"10.0.0.1/24","interface":null}]})"));
  ASSERT_TRUE(nulls.ok()) << nulls.status().message();
  EXPECT_EQ(*nulls, std::vector<std::string>{"10.0.0.1"});
}

TEST(CapabilityArgs, PortsDnsBandwidthAndAnnotations) {
  PodNetworkRequest r;
  r.port_mappings = {{"tcp", 80, 8080, ""}, {"udp", 53, 0, ""}, {"sctp", 9, 9009, "127.0.0.1"}};
  r.dns = {{"10.0.0.10"}, {"svc.cluster.local"}, {"ndots:5"}};
  r.annotations = {{"kubernetes.io/ingress-bandwidth", "1M"}, {"kubernetes.io/egress-bandwidth", "2Mi"}, {"team", "a"}};
  const json shaped = json::parse(R"([{"type":"bridge"},{"type":"bandwidth","capabilities":{"bandwidth":true}}])");
  auto caps = capability_args(r, shaped);
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
  json plugin =
      json::parse(R"({"type":"portmap","capabilities":{"portMappings":true,"bandwidth":false,"mystery":true}})");
  json rc = runtime_config_for(plugin, *caps);
  EXPECT_TRUE(rc.contains("portMappings"));
  EXPECT_FALSE(rc.contains("bandwidth"));
  EXPECT_FALSE(rc.contains("mystery"));
  EXPECT_TRUE(runtime_config_for(json::parse(R"({"type":"bridge"})"), *caps).empty());

  r.annotations = {{"kubernetes.io/ingress-bandwidth", "fast"}};
  auto bad = capability_args(r, shaped);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::invalid_argument);
  EXPECT_NE(bad.status().message().find("kubernetes.io/ingress-bandwidth"), std::string::npos);
  EXPECT_EQ(*parse_bandwidth("10k"), 10000u);
  EXPECT_EQ(*parse_bandwidth("1Gi"), 1073741824u);
  EXPECT_FALSE(parse_bandwidth("-5M").ok());
  EXPECT_FALSE(parse_bandwidth("5X").ok());
}

TEST(CapabilityArgs, BadBandwidthAnnotationIsIgnoredWhenNoPluginShapesTraffic) {
  PodNetworkRequest r;
  r.annotations = {{"kubernetes.io/ingress-bandwidth", "fast"}, {"kubernetes.io/egress-bandwidth", "-1"}};
  // No plugin asks for bandwidth (one even says false): the annotations are nobody's business.
  for (const char* plugins : {R"([{"type":"bridge"},{"type":"portmap","capabilities":{"portMappings":true}}])",
                              R"([{"type":"bandwidth","capabilities":{"bandwidth":false}}])"}) {
    auto caps = capability_args(r, json::parse(plugins));
    ASSERT_TRUE(caps.ok()) << plugins << ": " << caps.status().message();
    EXPECT_FALSE(caps->contains("bandwidth")) << plugins;
    EXPECT_EQ((*caps)["io.kubernetes.cri.pod-annotations"]["kubernetes.io/ingress-bandwidth"], "fast");
  }
  auto bad = capability_args(r, json::parse(R"([{"type":"bandwidth","capabilities":{"bandwidth":true}}])"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::invalid_argument);
  EXPECT_NE(bad.status().message().find("annotation kubernetes.io/"), std::string::npos) << bad.status().message();
}

TEST(NetworkConfig, DisableCheckIsABoolOrTheStringTrueOrFalse) {
  auto with = [](const std::string& value) {
    return network_config_from_json(
        json::parse(R"({"cniVersion":"1.0.0","name":"n","disableCheck":)" + value + R"(,"plugins":[{"type":"x"}]})"),
        "");
  };
  for (auto [value, want] : {std::pair{"true", true},
                             {"false", false},
                             {"\"true\"", true},
                             {"\"false\"", false},
                             {"\"True\"", true},
                             {"\"FALSE\"", false}}) {
    auto n = with(value);
    ASSERT_TRUE(n.ok()) << value << ": " << n.status().message();
    EXPECT_EQ(n->disable_check, want) << value;
  }
  for (const char* value : {"\"yes\"", "1", "null", "{}"}) {
    auto n = with(value);
    ASSERT_FALSE(n.ok()) << value;
    EXPECT_NE(n.status().message().find("disableCheck"), std::string::npos) << n.status().message();
  }
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
  CacheEntry e{"abc",          "eth0",
               "net1",         json::parse(R"({"cniVersion":"1.0.0","name":"net1","plugins":[{"type":"bridge"}]})"),
               "K=V",          json::object(),
               "/run/netns/x", json::parse(R"({"ips":[]})")};
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

// Cache files are read back from disk: an envelope member of another type makes the file
// unreadable (an error naming it, or skipped by the sweep of container ids), never an exception.
TEST(ResultCache, WrongTypedEnvelopeMembersAreErrorsAndNeverThrow) {
  TempDir dir;
  ResultCache cache(dir.path());
  CacheEntry e{"abc",          "eth0",
               "net1",         json::parse(R"({"cniVersion":"1.0.0","name":"net1","plugins":[{"type":"bridge"}]})"),
               "K=V",          json::object(),
               "/run/netns/x", json()};
  ASSERT_TRUE(cache.save(e).ok());
  const json good = json::parse(berth::test::read_file(cache.path_of(e)));
  struct Case {
    const char* pointer;
    json value;
    const char* why;
  } cases[] = {
      {"/version", "1", "unknown format version"},
      {"/sha256", 5, "checksum mismatch"},
      {"/entry", "abc", "checksum mismatch"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    json bad = good;
    bad[json::json_pointer(c.pointer)] = c.value;
    write_file(cache.path_of(e), bad.dump());
    Result<std::optional<CacheEntry>> found = internal_error("not run");
    EXPECT_NO_THROW(found = cache.find("abc", "eth0"));
    ASSERT_FALSE(found.ok());
    EXPECT_NE(found.status().message().find(c.why), std::string::npos) << found.status().message();
  }
  for (const json& entry : {json("abc"), json({{"containerId", 7}})}) {
    json bad = good;
    bad["entry"] = entry;
    write_file(cache.path_of(e), bad.dump());
    std::vector<std::string> ids;
    EXPECT_NO_THROW(ids = cache.container_ids());
    EXPECT_TRUE(ids.empty()) << entry.dump();
  }
  write_file(cache.path_of(e), good.dump());
  EXPECT_EQ(cache.container_ids(), std::vector<std::string>{"abc"});
}

// A capability is asked for only with true: any other value, or capabilities that are not an
// object, ask for nothing (and never throw).
TEST(CapabilityArgs, OnlyATrueCapabilityIsAskedFor) {
  const json offered = {{"portMappings", json::array()}, {"dns", json::object()}};
  json rc;
  EXPECT_NO_THROW(rc = runtime_config_for(
                      json::parse(R"({"type":"x","capabilities":{"portMappings":"yes","dns":true}})"), offered));
  EXPECT_EQ(rc, json({{"dns", json::object()}}));
  EXPECT_TRUE(runtime_config_for(json::parse(R"({"type":"x","capabilities":5})"), offered).empty());
  EXPECT_TRUE(runtime_config_for(json(5), offered).empty());
  EXPECT_FALSE(wants_capability(json::parse(R"([{"type":"b","capabilities":{"bandwidth":"true"}}])"), "bandwidth"));
  EXPECT_FALSE(wants_capability(json::parse(R"([5,{"capabilities":[]}])"), "bandwidth"));
}

// A list not parsed (as a default-constructed one) has no plugins rather than throwing.
TEST(NetworkConfig, AnUnparsedListHasNoPlugins) {
  NetworkConfigList none;
  std::vector<std::string> types;
  EXPECT_NO_THROW(types = none.plugin_types());
  EXPECT_TRUE(types.empty());
  EXPECT_TRUE(none.plugins().empty());
}

// A plugin script in a temp dir.
class PluginExec : public ::testing::Test {
 protected:
  void plugin(const std::string& name, const std::string& body) { write_file(dir_ / name, "#!/bin/sh\n" + body, 0755); }
  ExecSettings settings(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return {{dir_.path()}, timeout, std::chrono::milliseconds(1500), &observer_};
  }
  PluginCall call(const std::string& type, const std::string& command = "ADD") {
    return {
        command, type, "cid", "/run/netns/x", "eth0", "IgnoreUnknown=1;K8S_POD_NAME=p", R"({"cniVersion":"1.0.0"})"};
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
  plugin("failer",
         "echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"no more addresses\",\"details\":\"range 10.0.0.0/30 is "
         "full\"}'\nexit 1\n");
  auto out = exec_plugin(settings(), call("failer"));
  ASSERT_FALSE(out.ok());
  // The plugin's error object exactly as it printed it (key order, spacing), after who failed.
  const std::string printed =
      R"({"cniVersion":"1.0.0","code":11,"msg":"no more addresses","details":"range 10.0.0.0/30 is full"})";
  EXPECT_EQ(out.status().message(), "plugin failer (ADD): " + printed);
  plugin("spaced", "echo '{ \"code\": 7,  \"msg\": \"bad\" }'\necho noise >&2\nexit 1\n");
  auto spaced = exec_plugin(settings(), call("spaced"));
  ASSERT_FALSE(spaced.ok());
  EXPECT_EQ(spaced.status().message(), R"(plugin spaced (ADD): { "code": 7,  "msg": "bad" })");
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

TEST_F(PluginExec, PluginThatClosesItsOutputAndHangsIsKilledAtTheTimeout) {
  // No more output to wait for: only waiting for the exit can notice the deadline.
  plugin("quiet", "echo $$ > " + (dir_ / "pid") + "\nexec >&- 2>&-\nsleep 1000\n");
  auto run = std::async(std::launch::async,
                        [&] { return exec_plugin(settings(std::chrono::milliseconds(300)), call("quiet")); });
  if (run.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::kill(-std::stoi(berth::test::read_file(dir_ / "pid")), SIGKILL);  // lets the stuck wait (and this test) end
    FAIL() << "exec_plugin still waits for the plugin after 10s";
  }
  auto out = run.get();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::deadline_exceeded) << out.status().message();
  // The whole group went: the shell and the sleep it started.
  int pgid = std::stoi(berth::test::read_file(dir_ / "pid"));
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {  // the orphaned sleep is reaped by init, in its own time
    gone = ::kill(-pgid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "process group " << pgid << " is still there";
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

// CniManager on script plugins (no root needed: the scripts never touch a netns). Each script
// appends its CNI_COMMAND to <plugin dir>/commands.
class Manager : public ::testing::Test {
 protected:
  void plugin(const std::string& name, const std::string& body) {
    write_file(plugins_ / name,
               "#!/bin/sh\ncat >/dev/null\necho \"$CNI_COMMAND\" >> " + (plugins_ / "commands") + "\n" + body, 0755);
  }
  void conflist(const std::string& text) { write_file(conf_ / "10-test.conflist", text); }
  std::unique_ptr<CniManager> manager() {
    CniOptions o;
    o.conf_dir = conf_.path();
    o.plugin_dirs = {plugins_.path()};
    o.cache_dir = cache_.path();
    o.exec_timeout = std::chrono::seconds(5);
    o.watch_conf_dir = false;
    return std::make_unique<CniManager>(o);
  }
  PodNetworkRequest request(const std::string& id = "sandbox1") {
    PodNetworkRequest r;
    r.sandbox_id = id;
    r.pod_name = "p";
    r.pod_namespace = "ns";
    r.pod_uid = "uid";
    r.netns_path = "/run/netns/none";
    return r;
  }
  std::string commands() const {
    std::error_code ec;
    return std::filesystem::exists(plugins_ / "commands", ec) ? berth::test::read_file(plugins_ / "commands") : "";
  }
  bool cache_empty() const {
    std::error_code ec;
    return !std::filesystem::exists(cache_ / "results", ec) || std::filesystem::is_empty(cache_ / "results");
  }
  TempDir conf_, plugins_, cache_;
};

const char* kGoodResult = R"(echo '{"cniVersion":"1.0.0","ips":[{"address":"10.9.0.5/24"}]}')";

TEST_F(Manager, ReadinessFollowsThePluginBinariesWithoutAConfDirChange) {
  plugin("ok", std::string("[ \"$CNI_COMMAND\" = ADD ] && ") + kGoodResult + "\nexit 0\n");
  conflist(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"ok"}]})");
  auto m = manager();
  EXPECT_TRUE(m->readiness().ready) << m->readiness().message;
  std::filesystem::rename(plugins_ / "ok", plugins_ / "ok.away");
  NetworkReadiness r = m->readiness();
  EXPECT_FALSE(r.ready);
  EXPECT_EQ(r.reason, "NetworkPluginNotReady");
  EXPECT_NE(r.message.find("needs plugins not found in " + plugins_.path() + ": ok"), std::string::npos) << r.message;
  std::filesystem::rename(plugins_ / "ok.away", plugins_ / "ok");
  EXPECT_TRUE(m->readiness().ready) << m->readiness().message;
}

TEST_F(Manager, UnreadableResultIsReleasedBeforeSetupFails) {
  // ADD succeeds but its result holds an address that is none: the pod cannot use it, and what
  // the plugin set up must not leak.
  plugin("odd", R"([ "$CNI_COMMAND" = ADD ] && echo '{"cniVersion":"1.0.0","ips":[{"address":"10.9.0.300/24"}]}'
exit 0
)");
  conflist(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"odd"}]})");
  auto m = manager();
  auto r = m->setup(request());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad address \"10.9.0.300/24\""), std::string::npos) << r.status().message();
  EXPECT_EQ(commands(), "ADD\nDEL\n");
  EXPECT_TRUE(cache_empty());
  EXPECT_EQ(m->status("sandbox1").status().code(), Code::not_found);
}

TEST_F(Manager, ResultOfTheWrongShapeIsAnErrorAndReleasedWithoutThrowing) {
  plugin("odd", R"([ "$CNI_COMMAND" = ADD ] && echo '{"cniVersion":"1.0.0","interfaces":"x","ips":[{"address":7}]}'
exit 0
)");
  conflist(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"odd"}]})");
  auto m = manager();
  Result<PodNetworkStatus> r = internal_error("not run");
  EXPECT_NO_THROW(r = m->setup(request()));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("field 'interfaces': type must be array, but is string"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(commands(), "ADD\nDEL\n");
  EXPECT_TRUE(cache_empty());
}

TEST_F(Manager, DisableCheckGivenAsAStringIsHonouredWithoutThrowing) {
  plugin("ok", std::string("[ \"$CNI_COMMAND\" = ADD ] && ") + kGoodResult + "\nexit 0\n");
  for (auto [value, runs_check] : {std::pair{"\"true\"", false}, {"\"false\"", true}, {"true", false}}) {
    SCOPED_TRACE(value);
    std::filesystem::remove(plugins_ / "commands");
    conflist(std::string(R"({"cniVersion":"1.0.0","name":"n","disableCheck":)") + value +
             R"(,"plugins":[{"type":"ok"}]})");
    auto m = manager();
    ASSERT_TRUE(m->setup(request()).ok());
    EXPECT_TRUE(m->check("sandbox1", "/run/netns/none").ok());
    EXPECT_EQ(commands(), runs_check ? "ADD\nCHECK\n" : "ADD\n");
    ASSERT_TRUE(m->teardown("sandbox1", "").ok());
  }
}

// The caller may start setup before the netns exists: the entry (ADD's intent, for a DEL after a
// crash) is written at once, and no plugin runs before the netns is reported made.
TEST_F(Manager, SetupRecordsItsIntentAndWaitsForTheNetnsBeforeAnyPlugin) {
  plugin("ok", std::string("[ \"$CNI_COMMAND\" = ADD ] && ") + kGoodResult + "\nexit 0\n");
  conflist(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"ok"}]})");
  auto m = manager();
  std::promise<Status> netns;
  PodNetworkRequest req = request();
  req.netns_ready = netns.get_future().share();
  auto setup = std::async(std::launch::async, [&] { return m->setup(req); });
  for (int i = 0; i < 500 && cache_empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_FALSE(cache_empty());
  EXPECT_EQ(setup.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_EQ(commands(), "");
  netns.set_value(ok_status());
  auto r = setup.get();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ips, std::vector<std::string>{"10.9.0.5"});
  EXPECT_EQ(commands(), "ADD\n");
  ASSERT_TRUE(m->status("sandbox1").ok());
  ASSERT_TRUE(m->teardown("sandbox1", "").ok());
  EXPECT_TRUE(cache_empty());
}

TEST_F(Manager, SetupCalledOffBeforeTheNetnsRunsNoPluginAndDropsItsIntent) {
  plugin("ok", std::string("[ \"$CNI_COMMAND\" = ADD ] && ") + kGoodResult + "\nexit 0\n");
  conflist(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"ok"}]})");
  auto m = manager();
  std::promise<Status> netns;
  PodNetworkRequest req = request();
  req.netns_ready = netns.get_future().share();
  netns.set_value(internal_error("pin netns: Read-only file system"));
  auto r = m->setup(req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("network setup of sandbox1: pin netns: Read-only file system"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(commands(), "");
  EXPECT_TRUE(cache_empty());
  ASSERT_TRUE(m->teardown("sandbox1", "").ok());  // nothing to DEL
  EXPECT_EQ(commands(), "");
}

// A crash between the pin file's creation and its bind mount leaves ADD's intent and a netns path
// that is a plain file: DEL on it would fail in every plugin ("unknown FS magic") and wedge the
// pod's stop for good, so DEL gets no netns and releases the address. A real namespace is kept.
TEST_F(Manager, DelOfANetnsPathThatIsNoNamespaceRunsWithoutOne) {
  plugin("ok", std::string("[ \"$CNI_COMMAND\" = ADD ] && ") + kGoodResult + "\necho \"netns=$CNI_NETNS\" >> " +
                   (plugins_ / "netns") + "\nexit 0\n");
  conflist(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"ok"}]})");
  auto m = manager();
  TempDir pins;
  std::string plain = pins / "sandbox1";
  write_file(plain, "");
  PodNetworkRequest req = request();
  req.netns_path = "/proc/self/ns/net";
  ASSERT_TRUE(m->setup(req).ok());
  Status s = m->teardown("sandbox1", plain);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(m->setup(req).ok());
  s = m->teardown("sandbox1", "/proc/self/ns/net");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(commands(), "ADD\nDEL\nADD\nDEL\n");
  EXPECT_EQ(berth::test::read_file(plugins_ / "netns"),
            "netns=/proc/self/ns/net\nnetns=\nnetns=/proc/self/ns/net\nnetns=/proc/self/ns/net\n");
  EXPECT_TRUE(cache_empty());
}

TEST_F(Manager, CorruptCacheEntryFallsBackToDelWithTheCurrentConfigAndGoes) {
  plugin("ok",
         std::string("[ \"$CNI_COMMAND\" = ADD ] && ") + kGoodResult + "\nenv > " + (plugins_ / "env") + "\nexit 0\n");
  conflist(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"ok"}]})");
  auto m = manager();
  ASSERT_TRUE(m->setup(request()).ok());
  ResultCache cache(cache_.path());
  CacheEntry probe;
  probe.container_id = "sandbox1";
  probe.ifname = "eth0";
  probe.network_name = "n";
  std::string path = cache.path_of(probe);
  std::string text = berth::test::read_file(path);
  text[text.find("K8S_POD_NAME=p")] = 'Q';  // a checksum mismatch
  write_file(path, text);
  ASSERT_FALSE(m->status("sandbox1").ok());

  Status s = m->teardown("sandbox1", "");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(commands(), "ADD\nDEL\n");
  std::string env = berth::test::read_file(plugins_ / "env");
  EXPECT_NE(env.find("CNI_CONTAINERID=sandbox1"), std::string::npos);
  EXPECT_NE(env.find("CNI_IFNAME=eth0"), std::string::npos);
  EXPECT_TRUE(cache_empty());
  ASSERT_TRUE(m->teardown("sandbox1", "").ok());  // nothing left to do
  EXPECT_EQ(commands(), "ADD\nDEL\n");

  // With no network to DEL with, the corrupt entry still goes and teardown succeeds.
  ASSERT_TRUE(m->setup(request("sandbox2")).ok());
  probe.container_id = "sandbox2";
  write_file(cache.path_of(probe), "{ not json");
  std::filesystem::remove(conf_ / "10-test.conflist");
  m->reload();
  ASSERT_TRUE(m->teardown("sandbox2", "").ok());
  EXPECT_TRUE(cache_empty());
}

}  // namespace
}  // namespace berth::cni
