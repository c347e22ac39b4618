// Image references, manifest parsing, platform choice, image configs, the image index and the pull
// idle timeout, without a registry.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "berth/image_manager.h"
#include "../../image/bearer_realm.h"
#include "../../image/blob_store.h"
#include "../../image/sha256.h"
#include "../../image/image_index.h"
#include "../../image/manifest.h"
#include "../../image/registry_client.h"
#include "berth/image_reference.h"
#include "berth/node_credentials.h"
#include "berth/signature_policy.h"

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
  for (const std::string& bad : std::vector<std::string>{
           "", "UPPER", "a/B", "a:b:c", "a@sha256:abc", "a@md5:" + std::string(32, 'a'), "a/", "/a", "a//b",
           "a:", "a:-tag", "a..b", "a___b", "-a", "a-", "a:" + std::string(129, 't')}) {
    auto r = parse_image_reference(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::invalid_argument);
    EXPECT_NE(r.status().message().find("image reference '" + bad + "'"), std::string::npos) << r.status().message();
  }
}

TEST(Manifest, KindsAndSchemaOne) {
  const std::string cfg = R"({"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:)" +
                          std::string(64, 'c') + R"(","size":10})";
  const std::string layer = R"({"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:)" +
                            std::string(64, 'd') + R"(","size":20})";
  auto m = parse_manifest(R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":)" +
                              cfg + R"(,"layers":[)" + layer + "]}",
                          "", "m");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->is_index);
  EXPECT_EQ(m->layers.size(), 1u);
  EXPECT_EQ(m->config.size, 10);
  auto s1 = parse_manifest(R"({"schemaVersion":1,"name":"x","fsLayers":[]})",
                           "application/vnd.docker.distribution.manifest.v1+prettyjws", "m1");
  ASSERT_FALSE(s1.ok());
  EXPECT_NE(s1.status().message().find("schema 1"), std::string::npos);
  EXPECT_FALSE(parse_manifest("not json", "", "m").ok());
  auto foreign = parse_manifest(R"({"schemaVersion":2,"config":)" + cfg +
                                    R"(,"layers":[{"mediaType":"application/x-weird","digest":"sha256:)" +
                                    std::string(64, 'e') + R"(","size":1}]})",
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

// A registry's JSON is outside input: a member of the wrong type is an error naming it, never a
// nlohmann type_error escaping into the rpc handler (which would end berthd).
TEST(Manifest, WrongTypedFieldsAreErrorsNamingTheField) {
  const std::string digest = "sha256:" + std::string(64, 'c');
  const std::string cfg =
      R"({"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" + digest + R"(","size":10})";
  auto parse = [&](const std::string& body) {
    Result<ParsedManifest> m = invalid_argument("not parsed");
    EXPECT_NO_THROW(m = parse_manifest(body, "", "manifest x"));
    return m;
  };
  struct Case {
    std::string body, field;
  } cases[] = {
      {R"({"mediaType":5,"config":)" + cfg + R"(,"layers":[]})",
       "field 'mediaType': type must be string, but is number"},
      {R"({"schemaVersion":"2","config":)" + cfg + R"(,"layers":[]})",
       "field 'schemaVersion': type must be integer, but is string"},
      {R"({"config":)" + cfg + R"(,"layers":"x"})", "field 'layers': type must be array, but is string"},
      {R"({"config":{"mediaType":[],"digest":")" + digest + R"(","size":1},"layers":[]})",
       "field 'config.mediaType': type must be string, but is array"},
      {R"({"config":{"digest":7,"size":1},"layers":[]})", "field 'config.digest': type must be string, but is number"},
      {R"({"config":{"digest":")" + digest + R"(","size":"10"},"layers":[]})",
       "field 'config.size': type must be integer, but is string"},
      {R"({"config":)" + cfg + R"(,"layers":[{"digest":")" + digest + R"(","size":1},{"mediaType":true,"digest":")" +
           digest + R"(","size":1}]})",
       "field 'layers[1].mediaType': type must be string, but is boolean"},
      {R"({"config":5,"layers":[]})", "config: a descriptor is not an object"},
      // An index and its entries.
      {R"({"mediaType":"application/vnd.oci.image.index.v1+json","manifests":{}})",
       "field 'manifests': type must be array, but is object"},
      {R"({"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[5]})",
       "manifests[0]: a descriptor is not an object"},
      {R"({"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"digest":")" + digest +
           R"(","size":1,"platform":"linux/amd64"}]})",
       "field 'manifests[0].platform': type must be object, but is string"},
      {R"({"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"digest":")" + digest +
           R"(","size":1,"platform":{"os":"linux","architecture":64}}]})",
       "field 'manifests[0].platform.architecture': type must be string, but is number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    auto m = parse(c.body);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), Code::invalid_argument);
    EXPECT_EQ(m.status().message().rfind("manifest x: ", 0), 0u) << m.status().message();
    EXPECT_NE(m.status().message().find(c.field), std::string::npos) << m.status().message();
  }
  // Null is absence: an optional member left null takes its default.
  auto ok = parse(R"({"mediaType":null,"config":)" + cfg + R"(,"layers":[]})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->config.digest, digest);
}

TEST(ImageConfig, SummaryOfAValidConfigIsUnchanged) {
  auto s = summarise_image_config(R"({"architecture":"amd64","config":{"Entrypoint":["/bin/app"],"Cmd":["-v"],
      "Env":["PATH=/bin","A=1"],"WorkingDir":"/srv","User":"1000:1000","StopSignal":"SIGINT","Labels":{"k":"v"}}})");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->entrypoint, std::vector<std::string>{"/bin/app"});
  EXPECT_EQ(s->cmd, std::vector<std::string>{"-v"});
  EXPECT_EQ(s->env, (std::vector<std::string>{"PATH=/bin", "A=1"}));
  EXPECT_EQ(s->working_dir, "/srv");
  EXPECT_EQ(s->user, "1000:1000");
  EXPECT_EQ(s->stop_signal, "SIGINT");
  EXPECT_EQ(s->labels.at("k"), "v");
  // No config section, or null members: the defaults.
  auto empty = summarise_image_config(R"({"architecture":"amd64"})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->cmd.empty());
  auto nulls = summarise_image_config(R"({"config":{"User":null,"Cmd":null,"Labels":null}})");
  ASSERT_TRUE(nulls.ok()) << nulls.status().message();
  EXPECT_EQ(nulls->user, "");
}

TEST(ImageConfig, WrongTypedFieldsAreErrorsNamingTheField) {
  struct Case {
    std::string config, field;
  } cases[] = {
      {R"({"config":{"User":5}})", "field 'config.User': type must be string, but is number"},
      {R"({"config":{"WorkingDir":{}}})", "field 'config.WorkingDir': type must be string, but is object"},
      {R"({"config":{"StopSignal":15}})", "field 'config.StopSignal': type must be string, but is number"},
      {R"({"config":{"Cmd":"sh"}})", "field 'config.Cmd': type must be array, but is string"},
      {R"({"config":{"Entrypoint":["/bin/sh",1]}})",
       "field 'config.Entrypoint[1]': type must be string, but is number"},
      {R"({"config":{"Env":[["A=1"]]}})", "field 'config.Env[0]': type must be string, but is array"},
      {R"({"config":{"Labels":["a"]}})", "field 'config.Labels': type must be object, but is array"},
      {R"({"config":{"Labels":{"a":1}}})", "field 'config.Labels.a': type must be string, but is number"},
      {R"({"config":"x"})", "field 'config': type must be object, but is string"},
      {R"([1,2])", "not a JSON object"},
      {"not json", "not a JSON object"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.config);
    Result<ImageConfigSummary> s = invalid_argument("not parsed");
    EXPECT_NO_THROW(s = summarise_image_config(c.config));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Code::invalid_argument);
    EXPECT_NE(s.status().message().find(c.field), std::string::npos) << s.status().message();
  }
}

// index.json is berthd's own file, but may be damaged on disk: a record of the wrong shape is a
// clear error naming the file and field, and a stored config that no longer reads only loses
// its defaults.
TEST(ImageIndex, DamagedIndexIsAnErrorNamingTheFieldAndNeverThrows) {
  const std::string dir = testing::TempDir() + "image_index_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/index.json";
  auto load = [&](const std::string& text) {
    std::ofstream(file) << text;
    ImageIndex index(file);
    Status s;
    EXPECT_NO_THROW(s = index.load());
    return std::pair{s, index.images()};
  };
  const std::string id = "sha256:" + std::string(64, 'a');
  const std::string good =
      R"({"id":")" + id + R"(","repo_tags":["docker.io/library/a:1"],"repo_digests":[],"size":5,"layers":[],)";

  auto [ok, images] =
      load(R"({"version":1,"images":[)" + good + R"("config":"{\"config\":{\"User\":\"7\"}}","pinned":true}]})");
  ASSERT_TRUE(ok.ok()) << ok.message();
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0].config.user, "7");
  EXPECT_TRUE(images[0].pinned);

  auto [bad_config, kept] = load(R"({"version":1,"images":[)" + good + R"("config":"{\"config\":{\"User\":7}}"}]})");
  ASSERT_TRUE(bad_config.ok()) << bad_config.message();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].config.user, "");

  struct Case {
    std::string text, field;
  } cases[] = {
      {R"({"version":"1","images":[]})", "is not a version 1 index"},
      {R"({"version":1,"images":{}})", "is not a version 1 index"},
      {R"({"version":1,"images":[5]})", "field 'images[0]': type must be object, but is number"},
      {R"({"version":1,"images":[{"id":5}]})", "field 'images[0].id': type must be string, but is number"},
      {R"({"version":1,"images":[)" + good + R"("config":"{}","pinned":"yes"}]})",
       "field 'images[0].pinned': type must be boolean, but is string"},
      {R"({"version":1,"images":[{"id":")" + id + R"(","size":-1}]})",
       "field 'images[0].size': integer -1 out of range"},
      {R"({"version":1,"images":[{"id":")" + id + R"(","repo_tags":"a"}]})",
       "field 'images[0].repo_tags': type must be array, but is string"},
      {R"({"version":1,"images":[{"id":")" + id + R"(","layers":[1]}]})",
       "field 'images[0].layers[0]': type must be string, but is number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto [s, unused] = load(c.text);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message().rfind("image index " + file, 0), 0u) << s.message();
    EXPECT_NE(s.message().find(c.field), std::string::npos) << s.message();
  }
  std::filesystem::remove_all(dir);
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

TEST(BearerRealm, FollowedOnlyWhereCredentialsCannotLeakInClear) {
  auto ok = [](const std::string& base, const std::string& host, const std::string& realm, bool creds) {
    return check_bearer_realm(base, host, realm, creds).ok();
  };
  // https: always, with credentials, to any host.
  EXPECT_TRUE(ok("https://registry.example", "registry.example", "https://auth.example/token", true));
  // Other schemes never.
  for (const char* realm : {"ftp://auth.example/token", "file:///etc/passwd", "gopher://x", "auth.example/token", ""})
    EXPECT_FALSE(ok("https://registry.example", "registry.example", realm, false)) << realm;
  // Plain http for an https registry: only to a loopback token service.
  EXPECT_FALSE(ok("https://registry.example", "registry.example", "http://auth.example/token", false));
  EXPECT_FALSE(ok("https://registry.example", "registry.example", "http://registry.example/token", true));
  EXPECT_TRUE(ok("https://registry.example", "registry.example", "http://127.0.0.1:5001/token", true));
  // An insecure (plain http) or loopback registry: http realms are fine, credentials only to itself.
  EXPECT_TRUE(ok("http://registry.example", "registry.example", "http://auth.example/token", false));
  EXPECT_FALSE(ok("http://registry.example", "registry.example", "http://auth.example/token", true));
  EXPECT_TRUE(ok("http://registry.example", "registry.example", "http://registry.example/token", true));
  EXPECT_FALSE(ok("https://127.0.0.1:5000", "127.0.0.1:5000", "http://auth.example/token", true));
  // userinfo in the realm never stands for its host.
  EXPECT_FALSE(ok("http://registry.example", "registry.example", "http://registry.example@evil.example/t", true));
  EXPECT_EQ(url_scheme_host("HTTPS://a.example:8443/x?y").first, "https");
  EXPECT_EQ(url_scheme_host("https://u:p@a.example:8443/x").second, "a.example:8443");
  EXPECT_TRUE(is_loopback_host("[::1]:5000"));
  EXPECT_TRUE(is_loopback_host("127.9.9.9"));
  EXPECT_FALSE(is_loopback_host("127.1"));
}

// acquire() finds and holds in one step: a RemoveImage meanwhile hides the image but keeps its
// record (and layers) until the handle goes, or until the owner a hold was kept for releases it.
TEST(ImageManager, AcquireHoldsUntilTheHandleOrItsOwnerReleases) {
  const std::string dir = testing::TempDir() + "image_acquire_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string a = "sha256:" + std::string(64, 'a'), b = "sha256:" + std::string(64, 'b');
  auto record = [](const std::string& id, const std::string& tag) {
    return R"({"id":")" + id + R"(","repo_tags":[")" + tag +
           R"("],"repo_digests":[],"size":0,"layers":[],"config":"{}"})";
  };
  std::ofstream(dir + "/index.json") << R"({"version":1,"images":[)" + record(a, "docker.io/library/a:1") + "," +
                                            record(b, "docker.io/library/b:1") + "]}";
  auto images = ImageManager::open({.dir = dir});
  ASSERT_TRUE(images.ok()) << images.status().message();
  ImageManager& m = **images;
  ASSERT_TRUE(m.finish_recovery().ok());

  auto missing = m.acquire("docker.io/library/nope:1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::not_found);
  EXPECT_NE(missing.status().message().find("docker.io/library/nope:1"), std::string::npos);

  {
    auto held = m.acquire("a:1");
    ASSERT_TRUE(held.ok()) << held.status().message();
    EXPECT_EQ(held->record().id, a);
    ASSERT_TRUE(m.remove("a:1").ok());
    EXPECT_FALSE(m.find("a:1").has_value());  // gone for clients
    EXPECT_EQ(m.list().size(), 1u);
  }  // the handle releases: the hidden record goes too
  {
    auto held = m.acquire("b:1");
    ASSERT_TRUE(held.ok());
    ImageRecord kept = std::move(*held).keep();
    EXPECT_EQ(kept.id, b);
  }  // kept: still held after the handle
  ASSERT_TRUE(m.remove("b:1").ok());
  images->reset();
  // Reopened, a removed image nobody has held again since the restart is deleted at recovery's end.
  auto reopened = ImageManager::open({.dir = dir});
  ASSERT_TRUE(reopened.ok());
  (*reopened)->hold(b);  // the owner (a container record) takes its hold again
  ASSERT_TRUE((*reopened)->finish_recovery().ok());
  EXPECT_FALSE((*reopened)->find(a).has_value());
  (*reopened)->release(b);
  EXPECT_TRUE((*reopened)->list().empty());
  std::filesystem::remove_all(dir);
}

// Opening the store hands the first walks of the image store and of the writable layers to the
// usage cache's refresh thread, so kubelet's first ImageFsInfo answers from memory.
TEST(ImageManager, OpeningStartsBothTreesFirstWalksInTheBackground) {
  using namespace std::chrono_literals;
  const std::string dir = testing::TempDir() + "image_prefetch_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/containers/c1");
  std::ofstream(dir + "/containers/c1/data") << std::string(4096, 'x');
  DiskUsageCache usage({.refresh_interval = 1h});
  {
    auto images =
        ImageManager::open({.dir = dir + "/images", .containers_dir = dir + "/containers", .usage_cache = &usage});
    ASSERT_TRUE(images.ok()) << images.status().message();
    for (int i = 0; i < 1000 && usage.background_walks() < 2; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(usage.background_walks(), 2u) << "open() did not start both walks on the refresh thread";
    auto layers = (*images)->container_layers_usage();
    ASSERT_TRUE(layers.ok()) << layers.status().message();
    EXPECT_GE(layers->bytes, 4096u);
    ASSERT_TRUE((*images)->image_store_usage().ok());
    EXPECT_EQ(usage.background_walks(), 2u) << "a call walked again instead of answering from memory";
  }
  std::filesystem::remove_all(dir);
}

TEST(NodeCredentials, AuthFileKeysAreHostsOrRepositoryPrefixes) {
  EXPECT_EQ(auth_file_key("https://index.docker.io/v1/"), "docker.io");
  EXPECT_EQ(auth_file_key("registry-1.docker.io"), "docker.io");
  EXPECT_EQ(auth_file_key("http://127.0.0.1:5000/v2/"), "127.0.0.1:5000");
  EXPECT_EQ(auth_file_key("quay.io/org/repo/"), "quay.io/org/repo");
  EXPECT_EQ(auth_file_key("docker.io/library/busybox"), "docker.io/library/busybox");
}

TEST(NodeCredentials, AuthFileInDockersFormat) {
  auto f = parse_auth_file(R"({"auths": {
      "https://index.docker.io/v1/": {"auth": "dXNlcjpwYTpzcw=="},
      "registry.example": {"username": "u", "password": "p"},
      "quay.io/org": {"identitytoken": "refresh"},
      "helped.example": {}},
    "credHelpers": {"gcr.io": "gcloud"}, "credsStore": "secretservice", "HttpHeaders": {"X": "y"}})");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->auths.size(), 3u);
  EXPECT_EQ(f->auths["docker.io"].username, "user");
  EXPECT_EQ(f->auths["docker.io"].password, "pa:ss");  // split at the first colon
  EXPECT_EQ(f->auths["registry.example"].password, "p");
  EXPECT_EQ(f->auths["quay.io/org"].identity_token, "refresh");
  EXPECT_EQ(f->cred_helpers["gcr.io"], "gcloud");
  EXPECT_EQ(f->creds_store, "secretservice");

  // Errors name the entry, never its value.
  auto bad = parse_auth_file(R"({"auths": {"h": {"auth": "bm8tY29sb24="}}})");  // "no-colon"
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "auths[\"h\"].auth: not a base64 'user:password' pair");
  auto path = parse_auth_file(R"({"credHelpers": {"h": "../../bin/sh"}})");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().message(), "credHelpers[\"h\"]: not a helper name");
  EXPECT_FALSE(parse_auth_file("[]").ok());
  EXPECT_FALSE(parse_auth_file(R"({"auths": {"h": {"password": 3}}})").ok());
}

TEST(NodeCredentials, HelperAnswers) {
  auto c = parse_helper_answer(R"({"ServerURL": "h", "Username": "u", "Secret": "s"})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->username, "u");
  EXPECT_EQ(c->password, "s");
  auto t = parse_helper_answer(R"({"ServerURL": "h", "Username": "<token>", "Secret": "refresh"})");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->identity_token, "refresh");
  EXPECT_TRUE(t->username.empty());
  EXPECT_FALSE(parse_helper_answer(R"({"Username": "u"})").ok());
  EXPECT_FALSE(parse_helper_answer("credentials not found in native keychain").ok());
}

TEST(NodeCredentials, JwtExpiry) {
  // {"alg":"none"} . {"exp":1900000000,"sub":"x"} . (no signature): base64url without padding.
  EXPECT_EQ(jwt_expiry("eyJhbGciOiJub25lIn0.eyJleHAiOjE5MDAwMDAwMDAsInN1YiI6IngifQ."), 1900000000);
  EXPECT_EQ(jwt_expiry("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."), std::nullopt);  // no exp
  EXPECT_EQ(jwt_expiry("plain-password"), std::nullopt);
  EXPECT_EQ(jwt_expiry("a.!!!.b"), std::nullopt);
}

// Without an auth file there are no node credentials, whatever the reference.
TEST(NodeCredentials, NoneWithoutAFile) {
  NodeCredentials none({});
  auto c = none.lookup(*parse_image_reference("registry.example/a/b:c"));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->empty());
  testing::internal::CaptureStderr();
  NodeCredentials missing({.auth_file = "/nonexistent/berth-auth.json"});
  c = missing.lookup(*parse_image_reference("registry.example/a/b:c"));
  testing::internal::GetCapturedStderr();
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->empty());
}

// A resumable write keeps its bytes when it fails, the next one continues from them (hashing
// them again), a writer holding the partial keeps a second one off it, and bytes found wrong at
// the commit are not kept.
TEST(BlobStore, PartialDownloadsAreContinuedAndVerifiedWhole) {
  const std::string dir = testing::TempDir() + "blob_partial_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto store = BlobStore::open(dir);
  ASSERT_TRUE(store.ok());
  std::string blob(3 << 20, 'x');
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>(i * 7919 % 251);
  const std::string digest = Sha256::of(blob);
  const int64_t size = static_cast<int64_t>(blob.size());
  {
    auto w = (*store)->begin(digest, size, true);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->resumed_from(), 0u);
    ASSERT_TRUE((*w)->write(blob.data(), 1 << 20).ok());
    // A second writer while the first holds it: a plain temp write, the partial left alone.
    auto other = (*store)->begin(digest, size, true);
    ASSERT_TRUE(other.ok());
    EXPECT_EQ((*other)->resumed_from(), 0u);
  }  // failed: kept
  ASSERT_EQ((*store)->partials().size(), 1u);
  EXPECT_EQ((*store)->partials()[0].bytes, 1u << 20);
  {
    auto w = (*store)->begin(digest, size, true);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->resumed_from(), 1u << 20);
    ASSERT_TRUE((*w)->write(blob.data() + (1 << 20), blob.size() - (1 << 20)).ok());
    ASSERT_TRUE((*w)->commit().ok());
  }
  EXPECT_TRUE((*store)->has(digest));
  EXPECT_TRUE((*store)->partials().empty());
  auto read = (*store)->read(digest, blob.size());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, blob);

  // A partial whose bytes are wrong: the commit refuses the whole, and nothing is kept.
  ASSERT_TRUE((*store)->remove(digest).ok());
  {
    auto w = (*store)->begin(digest, size, true);
    std::string wrong(1 << 20, 'w');
    ASSERT_TRUE((*w)->write(wrong.data(), wrong.size()).ok());
  }
  {
    auto w = (*store)->begin(digest, size, true);
    EXPECT_EQ((*w)->resumed_from(), 1u << 20);
    ASSERT_TRUE((*w)->write(blob.data() + (1 << 20), blob.size() - (1 << 20)).ok());
    Status s = (*w)->commit();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("digest mismatch"), std::string::npos) << s.message();
  }
  EXPECT_FALSE((*store)->has(digest));
  EXPECT_TRUE((*store)->partials().empty());

  // A restart (a server without ranges) starts over from byte 0.
  {
    auto w = (*store)->begin(digest, size, true);
    ASSERT_TRUE((*w)->write("junk", 4).ok());
    ASSERT_TRUE((*w)->restart().ok());
    ASSERT_TRUE((*w)->write(blob.data(), blob.size()).ok());
    ASSERT_TRUE((*w)->commit().ok());
  }
  EXPECT_TRUE((*store)->has(digest));
  std::filesystem::remove_all(dir);
}

// Fixed vectors: RFC 8032's first Ed25519 test (empty message), and a P-256 key and signature made
// with openssl over a simple-signing payload.
const char kEd25519Pem[] =
    "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC "
    "KEY-----\n";
const char kEd25519SignatureHex[] =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe2465"
    "5141438e7a100b";
const char kP256Pem[] =
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAENq6K05/axg/EFqAFp8iszjlxy2gh\n"
    "RwiA+/wnKARSTB+xXjBpFkWKAU4VqQdvlVFfN2D1v55GVNM1scnCx9avmQ==\n-----END PUBLIC KEY-----\n";
const char kP256SignatureBase64[] =
    "MEYCIQDom4BKws3SWhLs1ihGuzW1McTkaXGedeuD0jsLlSsWTAIhALbutQjSo/EFPUbwaRQi+EF7sDgrWhMEx9ETXsYZY5wf";

std::string signed_payload() {
  return R"({"critical":{"identity":{"docker-reference":"registry.example/app"},"image":{"docker-manifest-digest":"sha256:)" +
         std::string(64, 'a') + R"("},"type":"cosign container image signature"},"optional":null})";
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string from_base64(const std::string& b64) {
  std::string out;
  int val = 0, bits = -8;
  for (char c : b64) {
    auto p = std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/").find(c);
    if (p == std::string::npos) break;
    val = (val << 6) + static_cast<int>(p);
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((val >> bits) & 0xff);
      bits -= 8;
    }
  }
  return out;
}

TEST(SignaturePolicy, KeysOfBothKindsVerifyTheirSignaturesAndNothingElse) {
  auto ed = parse_public_key_pem(kEd25519Pem);
  ASSERT_TRUE(ed.ok()) << ed.status().message();
  EXPECT_EQ(ed->kind, PublicKey::Kind::ed25519);
  EXPECT_TRUE(signature_verifies(*ed, "", from_hex(kEd25519SignatureHex)));
  EXPECT_FALSE(signature_verifies(*ed, "x", from_hex(kEd25519SignatureHex)));
  auto ec = parse_public_key_pem(kP256Pem);
  ASSERT_TRUE(ec.ok()) << ec.status().message();
  EXPECT_EQ(ec->kind, PublicKey::Kind::ecdsa_p256);
  const std::string sig = from_base64(kP256SignatureBase64);
  EXPECT_TRUE(signature_verifies(*ec, signed_payload(), sig));
  std::string altered = signed_payload();
  altered[10] = 'X';
  EXPECT_FALSE(signature_verifies(*ec, altered, sig));
  EXPECT_FALSE(signature_verifies(*ed, signed_payload(), sig));
  std::string cut = sig;
  cut.pop_back();
  EXPECT_FALSE(signature_verifies(*ec, signed_payload(), cut));
  EXPECT_FALSE(parse_public_key_pem("-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n").ok());
  EXPECT_FALSE(parse_public_key_pem("ssh-ed25519 AAAA").ok());
}

TEST(SignaturePolicy, JudgesDigestIdentityAndKey) {
  auto ec = parse_public_key_pem(kP256Pem);
  ASSERT_TRUE(ec.ok());
  ec->file = "/keys/ec.pub";
  SignaturePolicy::Requirement req{"registry.example", PolicyRule::Kind::signed_by, {*ec}};
  auto ref = parse_image_reference("registry.example/app:v1");
  const std::string digest = "sha256:" + std::string(64, 'a');
  const FetchedSignature good{signed_payload(), from_base64(kP256SignatureBase64), ""};
  auto verdict = judge_signatures(req, *ref, digest, {good});
  ASSERT_TRUE(verdict.ok()) << verdict.status().message();
  EXPECT_EQ(*verdict, "signedBy /keys/ec.pub (scope \"registry.example\")");
  // Another digest, another repository, none at all: refused, naming the scope and why.
  auto other = judge_signatures(req, *ref, "sha256:" + std::string(64, 'b'), {good});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::failed_precondition);
  EXPECT_NE(other.status().message().find("signs " + digest + ", not sha256:bbbb"), std::string::npos);
  auto elsewhere = judge_signatures(req, *parse_image_reference("registry.example/other"), digest, {good});
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.status().message().find("signs the identity registry.example/app, not registry.example/other"),
            std::string::npos);
  auto none = judge_signatures(req, *ref, digest, {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(
      none.status().message().find("signature policy scope \"registry.example\" requires a signature by /keys/ec.pub"),
      std::string::npos);
}

TEST(SignaturePolicy, TheLongestScopeWins) {
  auto policy = SignaturePolicy::load({PolicyRule::Kind::reject, {}},
                                      {{"registry.example", {PolicyRule::Kind::accept_anything, {}}},
                                       {"registry.example/team", {PolicyRule::Kind::reject, {}}}});
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ((*policy)->for_reference(*parse_image_reference("registry.example/team/app")).scope,
            "registry.example/team");
  EXPECT_EQ((*policy)->for_reference(*parse_image_reference("registry.example/teamwork")).scope, "registry.example");
  EXPECT_EQ((*policy)->for_reference(*parse_image_reference("other.example/app")).scope, "default");
  auto missing = SignaturePolicy::load({PolicyRule::Kind::accept_anything, {}},
                                       {{"registry.example", {PolicyRule::Kind::signed_by, {"/nonexistent/k.pub"}}}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("signature policy scope registry.example"), std::string::npos);
}

TEST(SignaturePolicy, CosignManifestLayersAndTag) {
  EXPECT_EQ(cosign_signature_tag("sha256:" + std::string(64, 'c')), "sha256-" + std::string(64, 'c') + ".sig");
  auto layers =
      parse_cosign_manifest(R"({"schemaVersion":2,"layers":[
      {"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","size":230,"digest":"sha256:)" +
                            std::string(64, 'd') + R"(","annotations":{"dev.cosignproject.cosign/signature":"MEUC"}},
      {"mediaType":"application/octet-stream","size":1,"digest":"sha256:)" +
                            std::string(64, 'e') + R"("}]})");
  ASSERT_TRUE(layers.ok()) << layers.status().message();
  ASSERT_EQ(layers->size(), 1u);
  EXPECT_EQ((*layers)[0].signature_base64, "MEUC");
  EXPECT_FALSE(parse_cosign_manifest(R"({"layers":[{"digest":"md5:x"}]})").ok());
}

}  // namespace
}  // namespace berth
