// The sandbox manager's hooks: the CRI -> CNI translation of a pod's network request, and the
// sandbox image policy (pinned, held, Entrypoint + Cmd as the pause's args).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../../server/sandbox_hooks.h"

namespace berth {
namespace {

namespace v1 = runtime::v1;

TEST(SandboxHooks, PodNetworkRequestCarriesPortsDnsAndAnnotations) {
  v1::DNSConfig dns;
  dns.add_servers("10.96.0.10");
  dns.add_searches("default.svc.cluster.local");
  dns.add_options("ndots:5");
  // As SandboxManager fills it: the checkpoint's port mappings (CRI's protocol names) and pod_dns.
  SandboxNetworkRequest r{.id = "p1",
                          .name = "web",
                          .namespace_ = "default",
                          .uid = "u1",
                          .netns_path = "/run/berth/netns/p1",
                          .port_mappings = {{v1::Protocol_Name(v1::TCP), 80, 8080, ""},
                                            {v1::Protocol_Name(v1::UDP), 53, 5353, "127.0.0.1"},
                                            {v1::Protocol_Name(v1::SCTP), 9, 9009, ""}},
                          .dns = pod_dns(dns),
                          .annotations = {{"kubernetes.io/ingress-bandwidth", "1M"}}};
  PodNetworkRequest req = pod_network_request(r);
  EXPECT_EQ(req.sandbox_id, "p1");
  EXPECT_EQ(req.pod_name, "web");
  EXPECT_EQ(req.pod_namespace, "default");
  EXPECT_EQ(req.pod_uid, "u1");
  EXPECT_EQ(req.netns_path, "/run/berth/netns/p1");
  ASSERT_EQ(req.port_mappings.size(), 3u);
  EXPECT_EQ(req.port_mappings[0].protocol, "tcp");
  EXPECT_EQ(req.port_mappings[0].host_port, 8080);
  EXPECT_EQ(req.port_mappings[1].protocol, "udp");
  EXPECT_EQ(req.port_mappings[1].host_ip, "127.0.0.1");
  EXPECT_EQ(req.port_mappings[2].protocol, "sctp");
  EXPECT_EQ(req.dns.servers, std::vector<std::string>{"10.96.0.10"});
  EXPECT_EQ(req.dns.searches, std::vector<std::string>{"default.svc.cluster.local"});
  EXPECT_EQ(req.dns.options, std::vector<std::string>{"ndots:5"});
  EXPECT_EQ(req.annotations.at("kubernetes.io/ingress-bandwidth"), "1M");
}

TEST(SandboxHooks, TheSandboxImageIsPinnedAndGivesThePauseItsArgs) {
  const std::string dir = testing::TempDir() + "sandbox_image_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string id = "sha256:" + std::string(64, 'c');
  std::ofstream(dir + "/index.json")
      << R"({"version":1,"images":[{"id":")" + id +
             R"(","repo_tags":["registry.local/pause:1"],"repo_digests":[],"size":0,"layers":[],)"
             R"("config":"{\"config\":{\"Entrypoint\":[\"/pause\"],\"Cmd\":[\"-v\"]}}"}]})";
  auto images = ImageManager::open({.dir = dir});
  ASSERT_TRUE(images.ok()) << images.status().message();
  ASSERT_TRUE((*images)->finish_recovery().ok());
  ASSERT_FALSE((*images)->find("registry.local/pause:1")->pinned);

  SandboxImagePolicy policy(**images, "registry.local/pause:1");
  auto pause = policy.pause_image();
  ASSERT_TRUE(pause.ok()) << pause.status().message();
  ASSERT_TRUE(pause->has_value());
  EXPECT_EQ((*pause)->id, id);
  EXPECT_EQ((*pause)->args, (std::vector<std::string>{"/pause", "-v"}));
  EXPECT_TRUE((*pause)->layer_dirs.empty());
  EXPECT_TRUE((*images)->find("registry.local/pause:1")->pinned);
  policy.release((*pause)->id);  // what the sandbox's removal does

  // No sandbox_image configured: the embedded pause, nothing looked up or held.
  auto embedded = SandboxImagePolicy(**images, "").pause_image();
  ASSERT_TRUE(embedded.ok());
  EXPECT_FALSE(embedded->has_value());

  // Not stored and no registry to pull from: the pull's error, nothing held.
  auto missing = SandboxImagePolicy(**images, "127.0.0.1:1/nope:1").pause_image();
  EXPECT_FALSE(missing.ok());
  images->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth
