// Image references, manifest parsing, platform choice and the pull idle timeout, without a registry.
#include <gtest/gtest.h>

#include "../../image/manifest.h"
#include "../../image/registry_client.h"
#include "berth/image_reference.h"

namespace berth {
namespace {

std::string norm(const std::string& s) {
  auto r = parse_image_reference(s);
  return r.ok() ? r->string() : "ERROR: " + r.status().message();
}

TEST(ImageReference, NormalisesLikeDockerAndKubelet) {
  const std::string d = "sha256:" + std::string(64, 'a');
  EXPECT_EQ(norm("busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(norm("busybox:1.36"), "docker.io/library/busybox:1.36");
  EXPECT_EQ(norm("library/busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(norm("user/app"), "docker.io/user/app:latest");
  EXPECT_EQ(norm("index.docker.io/busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(norm("registry.k8s.io/pause:3.9"), "registry.k8s.io/pause:3.9");
  EXPECT_EQ(norm("localhost/app"), "localhost/app:latest");
  EXPECT_EQ(norm("127.0.0.1:5000/a/b/c:v1"), "127.0.0.1:5000/a/b/c:v1");
  EXPECT_EQ(norm("busybox@" + d), "docker.io/library/busybox@" + d);
  EXPECT_EQ(norm("busybox:1@" + d), "docker.io/library/busybox:1@" + d);
  EXPECT_EQ(norm("my-app_x/a__b.c:T_1.0-rc"), "docker.io/my-app_x/a__b.c:T_1.0-rc");
  auto r = parse_image_reference("127.0.0.1:5000/a:v");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->domain, "127.0.0.1:5000");
  EXPECT_EQ(r->repository, "a");
  EXPECT_EQ(parse_image_reference("busybox")->api_host(), "registry-1.docker.io");
}

TEST(ImageReference, MalformedOnesAreInvalidArgumentNamingThem) {
  for (const std::string& bad : std::vector<std::string>{"", "UPPER", "a/B", "a:b:c", "a@sha256:abc", "a@md5:" + std::string(32, 'a'), "a/", "/a",
                                "a//b", "a:", "a:-tag", "a..b", "a___b", "-a", "a-", "a:" + std::string(129, 't')}) {
    auto r = parse_image_reference(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::invalid_argument);
    EXPECT_NE(r.status().message().find("image reference '" + bad + "'"), std::string::npos) << r.status().message();
  }
}

TEST(Manifest, KindsAndSchemaOne) {
  const std::string cfg = R"({"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:)" + std::string(64, 'c') +
                          R"(","size":10})";
  const std::string layer = R"({"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:)" +
                            std::string(64, 'd') + R"(","size":20})";
  auto m = parse_manifest(R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":)" + cfg +
                              R"(,"layers":[)" + layer + "]}",
                          "", "m");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->is_index);
  EXPECT_EQ(m->layers.size(), 1u);
  EXPECT_EQ(m->config.size, 10);
  auto s1 = parse_manifest(R"({"schemaVersion":1,"name":"x","fsLayers":[]})", "application/vnd.docker.distribution.manifest.v1+prettyjws", "m1");
  ASSERT_FALSE(s1.ok());
  EXPECT_NE(s1.status().message().find("schema 1"), std::string::npos);
  EXPECT_FALSE(parse_manifest("not json", "", "m").ok());
  auto foreign = parse_manifest(R"({"schemaVersion":2,"config":)" + cfg +
                                    R"(,"layers":[{"mediaType":"application/x-weird","digest":"sha256:)" + std::string(64, 'e') +
                                    R"(","size":1}]})",
                                "application/vnd.oci.image.manifest.v1+json", "m");
  EXPECT_FALSE(foreign.ok());
}

TEST(Manifest, PlatformSelection) {
  ParsedManifest idx;
  idx.is_index = true;
  auto add = [&](std::string arch, std::string variant, char c) {
    idx.manifests.push_back({"", "sha256:" + std::string(64, c), 1, {"linux", arch, variant}});
  };
  add("arm", "v6", 'a');
  add("arm", "v7", 'b');
  add("arm64", "v8", 'c');
  add("amd64", "", 'd');
  EXPECT_EQ(select_platform(idx, {"linux", "amd64", ""}, "i")->digest.back(), 'd');
  EXPECT_EQ(select_platform(idx, {"linux", "arm", "v7"}, "i")->digest.back(), 'b');
  EXPECT_EQ(select_platform(idx, {"linux", "arm64", "v8"}, "i")->digest.back(), 'c');
  auto none = select_platform(idx, {"linux", "riscv64", ""}, "index x");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("linux/arm/v6, linux/arm/v7, linux/arm64/v8, linux/amd64"), std::string::npos)
      << none.status().message();
}

TEST(IdleWatch, OnlyTimeWithoutAnyByteCounts) {
  using namespace std::chrono_literals;
  IdleWatch w(2s);
  auto t = IdleWatch::Clock::time_point{} + 1000s;
  // Connecting is not idling, however long it takes.
  EXPECT_FALSE(w.stalled(false, 0, t));
  EXPECT_FALSE(w.stalled(false, 0, t + 20s));
  t += 20s;
  EXPECT_FALSE(w.stalled(true, 0, t));
  EXPECT_FALSE(w.stalled(true, 0, t + 1900ms));
  // A byte every 1.5s for 30s: 0.67 bytes/s, yet never 2s without one.
  uint64_t bytes = 0;
  for (int i = 1; i <= 20; ++i) {
    t += 1500ms;
    EXPECT_FALSE(w.stalled(true, ++bytes, t)) << i;
    EXPECT_FALSE(w.stalled(true, bytes, t + 1s)) << i;
  }
  EXPECT_FALSE(w.stalled(true, bytes, t + 1999ms));
  EXPECT_TRUE(w.stalled(true, bytes, t + 2s));
  // Connecting again (a new connection) pauses the clock until it is up.
  EXPECT_FALSE(w.stalled(false, bytes, t + 5s));
  EXPECT_FALSE(w.stalled(true, bytes, t + 6s));
  EXPECT_TRUE(w.stalled(true, bytes, t + 8s));

  IdleWatch never(0s);
  EXPECT_FALSE(never.stalled(true, 0, t));
  EXPECT_FALSE(never.stalled(true, 0, t + 3600s));
}

}  // namespace
}  // namespace berth
