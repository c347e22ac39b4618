// The image service against a real registry (Debian's docker-registry on 127.0.0.1) holding
// images the project builds from busybox-static: reference forms, index selection, digest checks,
// layers and whiteouts as overlayfs sees them, auth, mirrors, errors, removal and persistence.
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <set>
#include <thread>

#include "berth/image_manager.h"
#include "berth/image_reference.h"
#include "berth/test/daemon_process.h"
#include "berth/test/helper_process.h"

namespace berth::test {
namespace {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;
using nlohmann::json;

// One registry with every test image for the whole suite (pushing takes about a second).
class Images : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    digests_ = new json(json::parse(push_test_images(registry_->url())));
  }
  static void TearDownTestSuite() {
    delete digests_;
    delete registry_;
  }
  static std::string ref(const std::string& repo_tag) { return registry_->host() + "/" + repo_tag; }

  static grpc::Status pull(DaemonProcess& d, const std::string& image, v1::PullImageResponse* resp,
                           const v1::AuthConfig* auth = nullptr) {
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(image);
    if (auth) *req.mutable_auth() = *auth;
    return d.images()->PullImage(&ctx, req, resp);
  }
  static std::string pull_ok(DaemonProcess& d, const std::string& image) {
    v1::PullImageResponse resp;
    grpc::Status s = pull(d, image, &resp);
    EXPECT_TRUE(s.ok()) << image << ": " << s.error_message();
    return resp.image_ref();
  }
  static v1::ImageStatusResponse status(DaemonProcess& d, const std::string& image, bool verbose = false) {
    grpc::ClientContext ctx;
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(image);
    req.set_verbose(verbose);
    v1::ImageStatusResponse resp;
    EXPECT_TRUE(d.images()->ImageStatus(&ctx, req, &resp).ok());
    return resp;
  }
  static std::vector<v1::Image> list(DaemonProcess& d, const std::string& filter = "") {
    grpc::ClientContext ctx;
    v1::ListImagesRequest req;
    if (!filter.empty()) req.mutable_filter()->mutable_image()->set_image(filter);
    v1::ListImagesResponse resp;
    EXPECT_TRUE(d.images()->ListImages(&ctx, req, &resp).ok());
    return {resp.images().begin(), resp.images().end()};
  }
  static grpc::Status remove(DaemonProcess& d, const std::string& image) {
    grpc::ClientContext ctx;
    v1::RemoveImageRequest req;
    req.mutable_image()->set_image(image);
    v1::RemoveImageResponse resp;
    return d.images()->RemoveImage(&ctx, req, &resp);
  }
  static std::string snapshot(DaemonProcess& d, const std::string& layer_digest) {
    return d.root() + "/images/snapshots/" + layer_digest.substr(7);
  }
  static size_t count_files(const std::string& dir) {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (!it->is_directory()) ++n;
    return n;
  }

  // Names in a directory (blob files, snapshot directories).
  static std::set<std::string> entries(const std::string& dir) {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename());
    return out;
  }
  static bool eventually(const std::function<bool()>& done, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    for (auto end = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < end;) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  }

  // token-proxy.py in front of the suite's registry, without auth: it counts the requests it
  // forwards, can hold some until released, and can answer for a digest with other bytes.
  struct Proxy {
    explicit Proxy(const std::vector<std::string>& options)
        : port(free_loopback_port()), server("token-proxy.py", args(port, options), port) {}
    static std::vector<std::string> args(int port, const std::vector<std::string>& options) {
      std::vector<std::string> a{std::to_string(port), registry_->url(), "-", "-"};
      a.insert(a.end(), options.begin(), options.end());
      return a;
    }
    ~Proxy() { release(); }  // a held request must not outlive a failed test by minutes
    std::string host() const { return "127.0.0.1:" + std::to_string(port); }
    json stats() const { return json::parse(shell("curl -sf http://" + host() + "/_stats"), nullptr, false); }
    int held() const {
      json j = stats();
      return j.is_object() ? j.value("held", -1) : -1;
    }
    void release() const { shell("curl -sf http://" + host() + "/_release"); }
    int port;
    ScriptServer server;
  };

  static RegistryProcess* registry_;
  static json* digests_;
};
RegistryProcess* Images::registry_ = nullptr;
json* Images::digests_ = nullptr;

TEST_F(Images, PullByTagGivesFullStatus) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  const json& bb = (*digests_)["busybox"];
  std::string id = pull_ok(d, ref("test/busybox"));  // no tag: latest
  EXPECT_EQ(id, bb["config"]);
  auto st = status(d, ref("test/busybox:latest"), true);
  ASSERT_TRUE(st.has_image());
  EXPECT_EQ(st.image().id(), bb["config"]);
  ASSERT_EQ(st.image().repo_tags_size(), 1);
  EXPECT_EQ(st.image().repo_tags(0), ref("test/busybox:latest"));
  ASSERT_EQ(st.image().repo_digests_size(), 1);
  EXPECT_EQ(st.image().repo_digests(0), ref("test/busybox@") + bb["manifest"].get<std::string>());
  EXPECT_GT(st.image().size(), 500000u);  // busybox-static, gzipped
  EXPECT_FALSE(st.image().pinned());
  EXPECT_NE(st.info().at("info").find("\"org.berth.test\""), std::string::npos);
  // The layer is unpacked once into its snapshot.
  std::string snap = snapshot(d, bb["layers"][0]);
  EXPECT_TRUE(fs::exists(snap + "/bin/busybox"));
  EXPECT_TRUE(fs::is_symlink(snap + "/bin/sh"));
  // Lookups by id, id prefix and digest reference find it; an unknown image is an empty answer.
  EXPECT_TRUE(status(d, id).has_image());
  EXPECT_TRUE(status(d, id.substr(7, 12)).has_image());
  EXPECT_TRUE(status(d, ref("test/busybox@") + bb["manifest"].get<std::string>()).has_image());
  EXPECT_FALSE(status(d, ref("test/nothing:here")).has_image());
  EXPECT_EQ(list(d).size(), 1u);
  EXPECT_EQ(list(d, ref("test/busybox")).size(), 1u);
  EXPECT_EQ(list(d, ref("test/layered:v1")).size(), 0u);
  grpc::ClientContext sctx;
  auto stream = d.images()->StreamImages(&sctx, v1::StreamImagesRequest());
  v1::StreamImagesResponse batch;
  size_t streamed = 0;
  while (stream->Read(&batch)) streamed += static_cast<size_t>(batch.images_size());
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(streamed, 1u);
}

TEST_F(Images, ReferenceFormsAndDigestPinning) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  const json& bb = (*digests_)["busybox"];
  std::string digest = bb["manifest"];
  v1::PullImageResponse resp;
  // A registry that answers a digest with a manifest hashing to something else: refused, and
  // nothing is recorded or kept.
  std::string wrong = "sha256:" + std::string(64, 'a');
  {
    Proxy liar({"--serve-instead", wrong + "=/v2/test/busybox/manifests/latest"});
    grpc::Status s = pull(d, liar.host() + "/test/busybox@" + wrong, &resp);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.error_message().find("manifest " + wrong + ": digest mismatch: content hashes to " + digest),
              std::string::npos)
        << s.error_message();
    EXPECT_NE(s.error_message().find(liar.host()), std::string::npos) << s.error_message();
    json st = liar.stats();
    EXPECT_EQ(st["requests"].value("GET /v2/test/busybox/manifests/" + wrong, 0), 1) << st.dump();
    EXPECT_TRUE(list(d).empty());
    EXPECT_EQ(count_files(d.root() + "/images/blobs"), 0u);
  }
  EXPECT_EQ(pull_ok(d, ref("test/busybox@") + digest), bb["config"]);
  EXPECT_EQ(pull_ok(d, ref("test/busybox:other@") + digest), bb["config"]);
  // The tag of "repo:tag@digest" was never resolved: only the digest reference is recorded, and
  // the form pulled still finds the image.
  auto st = status(d, bb["config"]);
  EXPECT_EQ(st.image().repo_tags_size(), 0);
  ASSERT_EQ(st.image().repo_digests_size(), 1);
  EXPECT_EQ(st.image().repo_digests(0), ref("test/busybox@") + digest);
  EXPECT_FALSE(status(d, ref("test/busybox:other")).has_image());
  EXPECT_TRUE(status(d, ref("test/busybox:other@") + digest).has_image());
  // A digest the registry does not have.
  grpc::Status s = pull(d, ref("test/busybox@") + wrong, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_NE(s.error_message().find(registry_->host()), std::string::npos) << s.error_message();
  for (const char* bad : {"UPPER/case", "a:b:c", "busybox@sha256:123", "", "bad tag/x:!!"}) {
    grpc::Status b = pull(d, bad, &resp);
    EXPECT_EQ(b.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    if (*bad) {
      EXPECT_NE(b.error_message().find(bad), std::string::npos) << b.error_message();
    }
  }
}

TEST_F(Images, LayersUnpackWithWhiteoutsOwnersAndLinks) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  const json& img = (*digests_)["layered"];
  ASSERT_EQ(pull_ok(d, ref("test/layered:v1")), img["config"]);
  auto st = status(d, ref("test/layered:v1"));
  EXPECT_EQ(st.image().username(), "app");
  std::string l2 = snapshot(d, img["layers"][1]), l3 = snapshot(d, img["layers"][2]),
              l4 = snapshot(d, img["layers"][3]);
  struct stat s {};
  ASSERT_EQ(::lstat((l2 + "/data/b").c_str(), &s), 0);
  EXPECT_EQ(s.st_uid, 1000u);
  EXPECT_EQ(s.st_mode & 07777, 0600u);
  struct stat link {};
  ASSERT_EQ(::lstat((l2 + "/data/b-link").c_str(), &link), 0);
  EXPECT_EQ(link.st_ino, s.st_ino);  // a hardlink, not a copy
  EXPECT_EQ(fs::read_symlink(l2 + "/data/sym"), "/data/a");
  char xv[16] = {};
  EXPECT_EQ(::lgetxattr((l2 + "/data/b").c_str(), "user.berth", xv, sizeof xv), 4);
  EXPECT_STREQ(xv, "test");
  ASSERT_EQ(::lstat((l2 + "/data/null").c_str(), &s), 0);
  EXPECT_TRUE(S_ISCHR(s.st_mode));
  EXPECT_EQ(s.st_rdev, makedev(1, 3));
  // OCI whiteouts became overlayfs whiteouts.
  ASSERT_EQ(::lstat((l3 + "/data/a").c_str(), &s), 0);
  EXPECT_TRUE(S_ISCHR(s.st_mode));
  EXPECT_EQ(s.st_rdev, makedev(0, 0));
  EXPECT_FALSE(fs::exists(l3 + "/data/.wh.a"));
  char opq[4] = {};
  EXPECT_EQ(::lgetxattr((l3 + "/opq").c_str(), "trusted.overlay.opaque", opq, sizeof opq), 1);
  EXPECT_EQ(opq[0], 'y');
  EXPECT_TRUE(fs::exists(l4 + "/zstd-file"));  // the zstd layer

  // Stacked with overlayfs, the image looks as the layers say.
  TempDir mnt;
  std::string lower;
  auto dirs = img["layers"];
  for (int i = static_cast<int>(dirs.size()) - 1; i >= 0; --i)
    lower += (lower.empty() ? "" : ":") + snapshot(d, dirs[static_cast<size_t>(i)]);
  ASSERT_EQ(::mount("overlay", mnt.path().c_str(), "overlay", MS_RDONLY, ("lowerdir=" + lower).c_str()), 0)
      << strerror(errno);
  EXPECT_FALSE(fs::exists(mnt / "data/a"));  // whited out
  EXPECT_EQ(read_file(mnt / "data/b"), "file b\n");
  EXPECT_FALSE(fs::exists(mnt / "opq/old"));  // hidden by the opaque dir
  EXPECT_EQ(read_file(mnt / "opq/new"), "new\n");
  EXPECT_EQ(read_file(mnt / "zstd-file"), "from a zstd layer\n");
  EXPECT_TRUE(fs::exists(mnt / "bin/busybox"));
  ::umount2(mnt.path().c_str(), MNT_DETACH);
}

TEST_F(Images, IndexSelectsThisMachine) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  const json& multi = (*digests_)["multi"];
  EXPECT_EQ(pull_ok(d, ref("test/multi:v1")), multi["amd64"]["config"]);
  auto st = status(d, ref("test/multi:v1"));
  EXPECT_EQ(st.image().uid().value(), 1000);
  EXPECT_EQ(st.image().repo_digests(0), ref("test/multi@") + multi["index"].get<std::string>());
  // A Docker manifest list is an index too.
  EXPECT_EQ(pull_ok(d, ref("test/dlist:v1")), (*digests_)["dlist"]["amd64"]["config"]);
  v1::PullImageResponse resp;
  grpc::Status s = pull(d, ref("test/armonly:v1"), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("no image for linux/amd64"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("linux/arm64/v8, linux/s390x"), std::string::npos) << s.error_message();
}

TEST_F(Images, EscapingLayersAreRefusedAndLeaveNothing) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  // What the whiteout layers' planted symlink points at (the path is baked into the test images).
  const fs::path outside = "/tmp/berth-whiteout-escape-test";
  fs::remove_all(outside);
  fs::create_directories(outside);
  std::unique_ptr<const fs::path, void (*)(const fs::path*)> remove_outside(&outside, [](const fs::path* p) {
    std::error_code ec;
    fs::remove_all(*p, ec);
  });
  { std::ofstream(outside / "victim") << "must survive\n"; }
  for (const char* repo : {"test/escape:v1", "test/hlescape:v1", "test/whescape:v1", "test/opqescape:v1"}) {
    v1::PullImageResponse resp;
    grpc::Status s = pull(d, ref(repo), &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << repo << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("escapes the layer root"), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(fs::is_regular_file(outside / "victim"));
  char value[8];
  EXPECT_LT(::getxattr(outside.c_str(), "trusted.overlay.opaque", value, sizeof value), 0);
  EXPECT_FALSE(fs::exists("/tmp/escaped-by-berth-test"));
  EXPECT_TRUE(list(d).empty());
  EXPECT_EQ(count_files(d.root() + "/images/snapshots"), 0u);
}

TEST_F(Images, RegistryErrorsNameRegistryAndReference) {
  DaemonProcess d({.config_toml = "image_pull_idle_timeout_seconds = 2\n"});
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  grpc::Status missing = pull(d, ref("test/busybox:nosuchtag"), &resp);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(missing.error_message().find(ref("test/busybox:nosuchtag")), std::string::npos) << missing.error_message();
  EXPECT_NE(missing.error_message().find("404"), std::string::npos) << missing.error_message();

  int dead = free_loopback_port();
  grpc::Status unreachable = pull(d, "127.0.0.1:" + std::to_string(dead) + "/test/busybox:latest", &resp);
  EXPECT_EQ(unreachable.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(unreachable.error_message().find("127.0.0.1:" + std::to_string(dead)), std::string::npos);
  EXPECT_NE(unreachable.error_message().find("unreachable"), std::string::npos) << unreachable.error_message();
}

TEST_F(Images, StalledRegistryHitsTheIdleTimeout) {
  int port = free_loopback_port();
  ScriptServer stall("stall-server.py", {std::to_string(port)}, port);
  std::string host = "127.0.0.1:" + std::to_string(port);
  DaemonProcess d(
      {.config_toml = "image_pull_idle_timeout_seconds = 2\n[registries.\"" + host + "\"]\ninsecure = true\n"});
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  grpc::Status s = pull(d, host + "/test/busybox:latest", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("received no data for 2s"), std::string::npos) << s.error_message();
}

TEST_F(Images, ASlowButMovingTransferIsNotCut) {
  // A byte every 1.5s, 6s in all, under a 2s idle timeout: under 1 byte/s on average, yet never
  // 2s without a byte. The registry's 404 arrives whole.
  int port = free_loopback_port();
  ScriptServer trickle("stall-server.py", {std::to_string(port), "1.5"}, port);
  std::string host = "127.0.0.1:" + std::to_string(port);
  DaemonProcess d(
      {.config_toml = "image_pull_idle_timeout_seconds = 2\n[registries.\"" + host + "\"]\ninsecure = true\n"});
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  auto started = std::chrono::steady_clock::now();
  grpc::Status s = pull(d, host + "/test/busybox:latest", &resp);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  EXPECT_NE(s.error_message().find(": 404"), std::string::npos) << s.error_message();
}

TEST_F(Images, CorruptedBlobIsRejectedAndNothingKept) {
  // A registry of its own: the image's last layer is corrupted on disk after the push. Its base
  // layer is busybox's; the middle one and the manifest and config arrive intact.
  RegistryProcess reg;
  json dg = json::parse(push_test_images(reg.url()));
  ASSERT_EQ(dg["corrupt"]["layers"].size(), 3u);
  std::string layer = dg["corrupt"]["layers"][2];
  std::string data =
      reg.storage() + "/docker/registry/v2/blobs/sha256/" + layer.substr(7, 2) + "/" + layer.substr(7) + "/data";
  std::string good = read_file(data);
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x55;
  write_file(data, bad);
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  pull_ok(d, reg.host() + "/test/busybox:latest");
  const std::string blobs = d.root() + "/images/blobs/sha256", snapshots = d.root() + "/images/snapshots";
  auto blobs_before = entries(blobs), snapshots_before = entries(snapshots);
  ASSERT_EQ(snapshots_before.size(), 1u);
  v1::PullImageResponse resp;
  grpc::Status s = pull(d, reg.host() + "/test/corrupt:v1", &resp);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("digest mismatch"), std::string::npos) << s.error_message();
  // The failed pull took back what it alone stored, and left the shared base layer alone.
  EXPECT_FALSE(fs::exists(blobs + "/" + layer.substr(7)));
  EXPECT_EQ(entries(blobs), blobs_before);
  EXPECT_EQ(entries(snapshots), snapshots_before);
  EXPECT_EQ(count_files(d.root() + "/images/tmp"), 0u);
  EXPECT_EQ(list(d).size(), 1u);
  // Once the registry serves the right bytes, the next pull completes cleanly.
  write_file(data, good);
  EXPECT_EQ(pull_ok(d, reg.host() + "/test/corrupt:v1"), dg["corrupt"]["config"]);
}

TEST_F(Images, BasicAuthFromAuthConfig) {
  RegistryProcess reg("berth", "s3cret-pw");
  push_test_images(reg.url(), {"--user", "berth", "--password", "s3cret-pw", "--only", "busybox"});
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  grpc::Status anon = pull(d, reg.host() + "/test/busybox:latest", &resp);
  EXPECT_EQ(anon.error_code(), grpc::StatusCode::UNAUTHENTICATED) << anon.error_message();
  v1::AuthConfig wrong;
  wrong.set_username("berth");
  wrong.set_password("wrong-pw");
  EXPECT_EQ(pull(d, reg.host() + "/test/busybox:latest", &resp, &wrong).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::AuthConfig good;
  good.set_username("berth");
  good.set_password("s3cret-pw");
  EXPECT_TRUE(pull(d, reg.host() + "/test/busybox:latest", &resp, &good).ok());
  v1::AuthConfig encoded;
  encoded.set_auth("YmVydGg6czNjcmV0LXB3");  // base64("berth:s3cret-pw")
  EXPECT_TRUE(pull(d, reg.host() + "/test/busybox:other", &resp, &encoded).ok());
  EXPECT_EQ(d.log().find("s3cret-pw"), std::string::npos);
  EXPECT_EQ(d.log().find("YmVydGg6czNjcmV0LXB3"), std::string::npos);
}

// Credentials go only where they were given: a mirror that asks for them (401) never sees them
// unless its registry's settings say it takes them (mirror_credentials), and credentials named for
// another registry (AuthConfig.server_address) are not sent to this one.
TEST_F(Images, CredentialsGoOnlyToTheirRegistry) {
  RegistryProcess reg("berth", "s3cret-pw");
  push_test_images(reg.url(), {"--user", "berth", "--password", "s3cret-pw", "--only", "busybox"});
  const int mirror_port = free_loopback_port();
  ScriptServer mirror("token-proxy.py", {std::to_string(mirror_port), reg.url(), "-", "-", "--deny"}, mirror_port);
  auto mirror_saw = [&] {
    std::string answer = http_get(mirror_port, "/_stats");
    auto j = json::parse(answer.substr(std::min(answer.size(), answer.find("\r\n\r\n") + 4)), nullptr, false);
    return j.is_object() ? j["authorization"] : json();
  };
  const std::string cfg =
      "[registries.\"" + reg.host() + "\"]\nmirrors = [\"http://127.0.0.1:" + std::to_string(mirror_port) + "\"]\n";
  DaemonProcess d({.config_toml = cfg});
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  v1::AuthConfig good;
  good.set_username("berth");
  good.set_password("s3cret-pw");
  grpc::Status s = pull(d, reg.host() + "/test/busybox:latest", &resp, &good);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(mirror_saw(), json::array()) << "the mirror was sent the registry's credentials";
  v1::AuthConfig elsewhere = good;
  elsewhere.set_server_address("https://registry.elsewhere.example/v1/");
  EXPECT_EQ(pull(d, reg.host() + "/test/busybox:other", &resp, &elsewhere).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::AuthConfig named = good;
  named.set_server_address("http://" + reg.host() + "/");
  s = pull(d, reg.host() + "/test/busybox:other", &resp, &named);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(mirror_saw(), json::array());

  DaemonProcess trusting({.config_toml = cfg + "mirror_credentials = true\n"});
  ASSERT_TRUE(trusting.start()) << trusting.log();
  s = pull(trusting, reg.host() + "/test/busybox:latest", &resp, &good);
  EXPECT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(mirror_saw().is_array());
  ASSERT_FALSE(mirror_saw().empty()) << "mirror_credentials: the mirror is given them";
  EXPECT_EQ(mirror_saw()[0], "Basic YmVydGg6czNjcmV0LXB3");
}

// Callers share a pull of one reference only when they hold the same credentials: one without
// any, asking while a credentialed pull of a private image is under way, is refused by the
// registry, not handed the image that the other caller's secret fetched.
TEST_F(Images, ACallerWithoutCredentialsDoesNotRideOnAnothersPull) {
  RegistryProcess reg("berth", "s3cret-pw");
  push_test_images(reg.url(), {"--user", "berth", "--password", "s3cret-pw", "--only", "busybox"});
  const int port = free_loopback_port();
  ScriptServer proxy("token-proxy.py", {std::to_string(port), reg.url(), "-", "-", "--hold", "/manifests/latest"},
                     port);
  struct Release {
    int port;
    ~Release() { (void)http_get(port, "/_release"); }
  } release{port};
  const std::string image = "127.0.0.1:" + std::to_string(port) + "/test/busybox:latest";
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  v1::AuthConfig good;
  good.set_username("berth");
  good.set_password("s3cret-pw");
  auto credentialed = std::async(std::launch::async, [&] {
    v1::PullImageResponse r;
    return pull(d, image, &r, &good);
  });
  auto held = [&] {
    std::string answer = http_get(port, "/_stats");
    auto j = json::parse(answer.substr(std::min(answer.size(), answer.find("\r\n\r\n") + 4)), nullptr, false);
    return j.is_object() ? j.value("held", -1) : -1;
  };
  ASSERT_TRUE(eventually([&] { return held() >= 1; }));
  auto anonymous = std::async(std::launch::async, [&] {
    v1::PullImageResponse r;
    return pull(d, image, &r);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  (void)http_get(port, "/_release");
  grpc::Status anon = anonymous.get();
  EXPECT_EQ(anon.error_code(), grpc::StatusCode::UNAUTHENTICATED) << anon.error_message();
  grpc::Status with = credentialed.get();
  EXPECT_TRUE(with.ok()) << with.error_message();
}

TEST_F(Images, BearerTokenChallengeFlow) {
  int port = free_loopback_port();
  ScriptServer proxy("token-proxy.py", {std::to_string(port), registry_->url(), "tokenuser", "tok3n-pw"}, port);
  std::string host = "127.0.0.1:" + std::to_string(port);
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  v1::AuthConfig creds;
  creds.set_username("tokenuser");
  creds.set_password("tok3n-pw");
  grpc::Status s = pull(d, host + "/test/layered:v1", &resp, &creds);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.image_ref(), (*digests_)["layered"]["config"]);
  v1::AuthConfig bad;
  bad.set_username("tokenuser");
  bad.set_password("nope");
  grpc::Status refused = pull(d, host + "/test/busybox:latest", &resp, &bad);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED) << refused.error_message();
  EXPECT_EQ(d.log().find("tok3n-pw"), std::string::npos);
  // An identity token (OAuth2 refresh token) is exchanged at the token service.
  v1::AuthConfig identity;
  identity.set_identity_token("refresh-tok3n-pw");
  grpc::Status viaid = pull(d, host + "/test/busybox:other", &resp, &identity);
  EXPECT_TRUE(viaid.ok()) << viaid.error_message();
  identity.set_identity_token("refresh-wrong");
  EXPECT_EQ(pull(d, host + "/test/multi:v1", &resp, &identity).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(d.log().find("refresh-tok3n-pw"), std::string::npos);
}

TEST_F(Images, TlsIsVerifiedAndACaFileIsHonoured) {
  RegistryProcess tls("", "", true);
  push_test_images("https://" + tls.host(), {"--only", "busybox"}, tls.ca_file());
  v1::PullImageResponse resp;
  {
    DaemonProcess d;  // no CA configured: the self-signed chain is refused, never skipped
    ASSERT_TRUE(d.start()) << d.log();
    grpc::Status s = pull(d, tls.host() + "/test/busybox:latest", &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
    EXPECT_NE(s.error_message().find(tls.host()), std::string::npos) << s.error_message();
    // Refused as untrusted, not retried over plain HTTP (which the TLS port answers with a 400)
    // although the registry is on loopback.
    EXPECT_NE(s.error_message().find("certificate not trusted"), std::string::npos) << s.error_message();
    EXPECT_EQ(s.error_message().find("400"), std::string::npos) << s.error_message();
    EXPECT_TRUE(list(d).empty());
  }
  DaemonProcess d({.config_toml = "[registries.\"" + tls.host() + "\"]\nca_file = \"" + tls.ca_file() + "\"\n"});
  ASSERT_TRUE(d.start()) << d.log();
  grpc::Status s = pull(d, tls.host() + "/test/busybox:latest", &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.image_ref(), (*digests_)["busybox"]["config"]);
}

TEST_F(Images, FullDiskIsReportedAndLeavesNothing) {
  TempDir dir;
  std::string root = dir / "root";
  fs::create_directories(root);
  ASSERT_EQ(::mount("tmpfs", root.c_str(), "tmpfs", 0, "size=600k"), 0) << strerror(errno);
  DaemonProcess d({}, dir / "berth.sock", root, dir / "state");
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  grpc::Status s = pull(d, ref("test/busybox:latest"), &resp);  // about 1 MiB of layer
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("ENOSPC"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find(ref("test/busybox:latest")), std::string::npos) << s.error_message();
  EXPECT_EQ(count_files(root + "/images/tmp"), 0u);
  EXPECT_TRUE(list(d).empty());
  d.stop();
  ::umount2(root.c_str(), MNT_DETACH);
}

TEST_F(Images, RegistryTokenFromAuthConfig) {
  int port = free_loopback_port();
  ScriptServer proxy("token-proxy.py", {std::to_string(port), registry_->url(), "tokenuser", "tok3n-pw"}, port);
  // A token obtained beforehand (as a credential helper would) is used as is.
  std::string cmd = "curl -sf -u tokenuser:tok3n-pw 'http://127.0.0.1:" + std::to_string(port) +
                    "/token?service=berth-test&scope=repository:test/busybox:pull'";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512] = {};
  size_t n = std::fread(buf, 1, sizeof buf - 1, p);
  ASSERT_EQ(::pclose(p), 0);
  std::string token = json::parse(std::string(buf, n))["token"];
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  v1::AuthConfig auth;
  auth.set_registry_token(token);
  v1::PullImageResponse resp;
  grpc::Status s = pull(d, "127.0.0.1:" + std::to_string(port) + "/test/busybox:latest", &resp, &auth);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(d.log().find(token), std::string::npos);
}

TEST_F(Images, MirrorsAreTriedInOrderThenTheRegistry) {
  int dead = free_loopback_port();
  RegistryProcess empty_mirror;
  // registry.berth.invalid does not exist: only its mirrors can serve it.
  std::string cfg = "[registries.\"registry.berth.invalid\"]\nmirrors = [\"http://127.0.0.1:" + std::to_string(dead) +
                    "\", \"" + empty_mirror.url() + "\", \"" + registry_->url() + "\"]\n" + "[registries.\"" +
                    registry_->host() + "\"]\nmirrors = [\"" + empty_mirror.url() + "\"]\n";
  DaemonProcess d({.config_toml = cfg});
  ASSERT_TRUE(d.start()) << d.log();
  EXPECT_EQ(pull_ok(d, "registry.berth.invalid/test/busybox:latest"), (*digests_)["busybox"]["config"]);
  // The mirror lacks this image: the registry itself serves it.
  EXPECT_EQ(pull_ok(d, ref("test/layered:v1")), (*digests_)["layered"]["config"]);
}

TEST_F(Images, ConcurrentPullsShareTheWork) {
  // Through a proxy counting what reaches the registry. It holds the base layer, which both images
  // use, until every pull has had time to ask for it: a manifest or blob asked for twice would
  // show up as a second request.
  const json& bb = (*digests_)["busybox"];
  const json& layered = (*digests_)["layered"];
  Proxy proxy({"--hold", bb["layers"][0].get<std::string>()});
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  std::vector<std::future<std::string>> pulls;
  for (int i = 0; i < 6; ++i)
    pulls.push_back(std::async(std::launch::async, [&, i] {
      return pull_ok(d, proxy.host() + (i % 2 ? "/test/layered:v1" : "/test/busybox:latest"));
    }));
  EXPECT_TRUE(eventually([&] { return proxy.held() == 1; })) << proxy.stats().dump();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(proxy.held(), 1) << proxy.stats().dump();
  proxy.release();
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(pulls[static_cast<size_t>(i)].get(), (*digests_)[i % 2 ? "layered" : "busybox"]["config"]);
  json requests = proxy.stats()["requests"];
  std::set<std::string> want{"GET /v2/test/busybox/manifests/latest", "GET /v2/test/layered/manifests/v1",
                             "GET /v2/test/busybox/blobs/" + bb["config"].get<std::string>(),
                             "GET /v2/test/layered/blobs/" + layered["config"].get<std::string>()};
  for (const auto& l : bb["layers"]) want.insert("GET /v2/test/busybox/blobs/" + l.get<std::string>());
  for (const auto& l : layered["layers"])
    if (l != bb["layers"][0]) want.insert("GET /v2/test/layered/blobs/" + l.get<std::string>());
  std::set<std::string> got;
  for (const auto& [what, n] : requests.items()) {
    got.insert(what);
    EXPECT_EQ(n.get<int>(), 1) << what;
  }
  // The base layer comes once, from whichever repository asked first.
  std::string base_via_layered = "GET /v2/test/layered/blobs/" + bb["layers"][0].get<std::string>();
  if (got.count(base_via_layered)) {
    want.erase("GET /v2/test/busybox/blobs/" + bb["layers"][0].get<std::string>());
    want.insert(base_via_layered);
  }
  EXPECT_EQ(got, want) << requests.dump();
  EXPECT_EQ(list(d).size(), 2u);
  // The base layer, shared by both images, is stored once.
  EXPECT_TRUE(fs::exists(snapshot(d, (*digests_)["busybox"]["layers"][0])));
  EXPECT_EQ(count_files(d.root() + "/images/tmp"), 0u);
}

// RemoveImage of one tag removes the image with all its tags (the CRI's rule since 1.36), and then
// what nothing else uses.
TEST_F(Images, RemoveOfOneTagRemovesTheImageWithAllItsTags) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  const json& bb = (*digests_)["busybox"];
  pull_ok(d, ref("test/busybox:latest"));
  pull_ok(d, ref("test/busybox:other"));
  pull_ok(d, ref("test/layered:v1"));
  EXPECT_EQ(status(d, bb["config"]).image().repo_tags_size(), 2);
  EXPECT_TRUE(remove(d, ref("test/busybox:latest")).ok());
  EXPECT_FALSE(status(d, bb["config"]).has_image());
  EXPECT_FALSE(status(d, ref("test/busybox:other")).has_image());
  // The shared base layer stays for test/layered; busybox's config blob is gone.
  EXPECT_TRUE(fs::exists(snapshot(d, bb["layers"][0])));
  EXPECT_FALSE(fs::exists(d.root() + "/images/blobs/sha256/" + bb["config"].get<std::string>().substr(7)));
  EXPECT_TRUE(remove(d, (*digests_)["layered"]["config"]).ok());  // by id
  EXPECT_TRUE(list(d).empty());
  EXPECT_EQ(count_files(d.root() + "/images/snapshots"), 0u);
  EXPECT_EQ(count_files(d.root() + "/images/blobs"), 0u);
  EXPECT_TRUE(remove(d, ref("test/never:pulled")).ok());  // unknown: fine
  EXPECT_EQ(remove(d, "").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// ImageSpec.runtime_handler (kubelet's RuntimeClassInImageCriAPI): a pull records the handler it
// was for, a status or list naming a handler sees only what was pulled for it, a removal naming one
// drops that handler's claim alone, and a handler berthd does not know is refused by every rpc.
TEST_F(Images, RuntimeHandlersAreRecordedPerImage) {
  DaemonOptions o;
  o.config_toml = "[runtimes.runc]\npath = \"runc\"\n[runtimes.other]\npath = \"runc\"\n";
  DaemonProcess d(o);
  ASSERT_TRUE(d.start()) << d.log();
  const std::string image = ref("test/busybox:latest");
  auto call = [&](const std::string& handler, auto rpc) {
    grpc::ClientContext ctx;
    return rpc(ctx, handler);
  };
  auto pull_for = [&](const std::string& handler) {
    return call(handler, [&](grpc::ClientContext& ctx, const std::string& h) {
      v1::PullImageRequest req;
      req.mutable_image()->set_image(image);
      req.mutable_image()->set_runtime_handler(h);
      v1::PullImageResponse resp;
      return d.images()->PullImage(&ctx, req, &resp);
    });
  };
  auto status_for = [&](const std::string& handler, v1::ImageStatusResponse* resp) {
    return call(handler, [&](grpc::ClientContext& ctx, const std::string& h) {
      v1::ImageStatusRequest req;
      req.mutable_image()->set_image(image);
      req.mutable_image()->set_runtime_handler(h);
      return d.images()->ImageStatus(&ctx, req, resp);
    });
  };
  auto list_for = [&](const std::string& handler, v1::ListImagesResponse* resp) {
    return call(handler, [&](grpc::ClientContext& ctx, const std::string& h) {
      v1::ListImagesRequest req;
      req.mutable_filter()->mutable_image()->set_runtime_handler(h);
      return d.images()->ListImages(&ctx, req, resp);
    });
  };
  auto remove_for = [&](const std::string& handler) {
    return call(handler, [&](grpc::ClientContext& ctx, const std::string& h) {
      v1::RemoveImageRequest req;
      req.mutable_image()->set_image(image);
      req.mutable_image()->set_runtime_handler(h);
      v1::RemoveImageResponse resp;
      return d.images()->RemoveImage(&ctx, req, &resp);
    });
  };

  grpc::Status unknown = pull_for("nosuch");
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(unknown.error_message().find("image.runtime_handler: unknown runtime handler 'nosuch'"), std::string::npos)
      << unknown.error_message();
  EXPECT_TRUE(list(d).empty()) << "a refused pull fetched nothing";

  ASSERT_TRUE(pull_for("other").ok());
  v1::ImageStatusResponse st;
  ASSERT_TRUE(status_for("other", &st).ok());
  ASSERT_TRUE(st.has_image());
  EXPECT_EQ(st.image().spec().runtime_handler(), "other");
  st.Clear();
  ASSERT_TRUE(status_for("runc", &st).ok());  // the default, by name
  EXPECT_FALSE(st.has_image()) << "never pulled for the default handler";
  st.Clear();
  ASSERT_TRUE(status_for("", &st).ok());  // no handler named: any
  ASSERT_TRUE(st.has_image());
  EXPECT_EQ(st.image().spec().runtime_handler(), "other");
  EXPECT_EQ(status_for("nosuch", &st).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  v1::ListImagesResponse l;
  ASSERT_TRUE(list_for("runc", &l).ok());
  EXPECT_EQ(l.images_size(), 0);
  l.Clear();
  ASSERT_TRUE(list_for("other", &l).ok());
  EXPECT_EQ(l.images_size(), 1);
  grpc::Status bad_filter = list_for("nosuch", &l);
  EXPECT_EQ(bad_filter.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad_filter.error_message().find("filter.image.runtime_handler"), std::string::npos);

  ASSERT_TRUE(pull_for("").ok());  // now the default handler's too
  st.Clear();
  ASSERT_TRUE(status_for("runc", &st).ok());
  EXPECT_TRUE(st.has_image());
  EXPECT_EQ(remove_for("nosuch").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_TRUE(remove_for("other").ok());  // the other handler's claim alone
  st.Clear();
  ASSERT_TRUE(status_for("other", &st).ok());
  EXPECT_FALSE(st.has_image());
  st.Clear();
  ASSERT_TRUE(status_for("", &st).ok());
  ASSERT_TRUE(st.has_image());
  EXPECT_EQ(st.image().spec().runtime_handler(), "");

  // Recorded on disk: a restarted berthd knows it.
  ASSERT_EQ(d.stop(), 0);
  ASSERT_TRUE(d.start()) << d.log();
  st.Clear();
  ASSERT_TRUE(status_for("other", &st).ok());
  EXPECT_FALSE(st.has_image());
  ASSERT_TRUE(remove_for("other").ok());  // not pulled for it: nothing happens
  EXPECT_EQ(list(d).size(), 1u);
  ASSERT_TRUE(remove_for("runc").ok());  // its last handler: the image goes
  EXPECT_TRUE(list(d).empty());
}

// The node's own credentials (registry_auth_file, docker's config.json format) serve pulls that
// bring none: the file is re-read when it changes, the longest auths key wins, a pull secret the
// caller passes still wins over the node's, and no secret reaches the log.
TEST_F(Images, NodeCredentialsFromAnAuthFile) {
  RegistryProcess reg("berth", "s3cret-pw");
  push_test_images(reg.url(), {"--user", "berth", "--password", "s3cret-pw", "--only", "busybox"});
  TempDir dir("berth-auth");
  const std::string auth = dir / "auth.json";
  const std::string good = "YmVydGg6czNjcmV0LXB3", wrong = "YmVydGg6d3JvbmctcHc=";  // berth:s3cret-pw, berth:wrong-pw
  auto auths = [&](const std::string& key, const std::string& value) {
    return "\"" + key + "\": {\"auth\": \"" + value + "\"}";
  };
  write_file(auth, "{\"auths\": {" + auths(reg.host(), wrong) + "}}");
  DaemonOptions o;
  o.config_toml = "registry_auth_file = \"" + auth + "\"\n";
  DaemonProcess d(o);
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  grpc::Status s = pull(d, reg.host() + "/test/busybox:latest", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();

  // Re-read once it changes; the scheme and docker's "/v1/" suffix do not matter.
  write_file(auth, "{\"auths\": {" + auths("https://" + reg.host() + "/v1/", good) + "}}");
  s = pull(d, reg.host() + "/test/busybox:latest", &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();

  // A caller's own credentials win, even wrong ones.
  v1::AuthConfig theirs;
  theirs.set_username("berth");
  theirs.set_password("wrong-pw");
  EXPECT_EQ(pull(d, reg.host() + "/test/busybox:other", &resp, &theirs).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // The longest key: the repository's entry over the host's.
  write_file(auth,
             "{\"auths\": {" + auths(reg.host(), wrong) + ", " + auths(reg.host() + "/test/busybox", good) + "}}");
  s = pull(d, reg.host() + "/test/busybox:other", &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();

  // A broken file gives no credentials (and says so), rather than failing every pull.
  write_file(auth, "{\"auths\": ");
  EXPECT_EQ(pull(d, reg.host() + "/test/busybox:latest", &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(pull(d, ref("test/busybox:latest"), &resp).ok()) << "an open registry needs none";
  EXPECT_NE(d.log().find("registry_auth_file " + auth + ": not a JSON object"), std::string::npos) << d.log();

  for (const std::string& secret : {std::string("s3cret-pw"), std::string("wrong-pw"), good, wrong})
    EXPECT_EQ(d.log().find(secret), std::string::npos) << secret;
}

// Credential helpers the auth file names (credHelpers per host, credsStore for the rest), run as
// docker runs them (docker-credential-<name> get, the server URL on stdin, JSON out): the answer
// serves the pull and is cached; "credentials not found" is an anonymous pull; a helper that hangs
// is killed after credential_helper_timeout_seconds and the pull fails naming it.
TEST_F(Images, NodeCredentialsFromAHelper) {
  RegistryProcess reg("berth", "s3cret-pw");
  push_test_images(reg.url(), {"--user", "berth", "--password", "s3cret-pw", "--only", "busybox"});
  TempDir dir("berth-helper");
  fs::create_directories(dir / "bin");
  const std::string helper = dir / "bin/docker-credential-berthtest";
  write_file(helper,
             "#!/bin/sh\n"
             "read url\n"
             "[ \"$1\" = get ] || exit 3\n"
             "echo \"$url\" >> " +
                 (dir / "asked") +
                 "\n"
                 "if [ -e " +
                 (dir / "hang") +
                 " ]; then sleep 1000; fi\n"
                 "if [ \"$url\" = \"" +
                 reg.host() +
                 "\" ]; then\n"
                 "  printf '{\"ServerURL\":\"%s\",\"Username\":\"berth\",\"Secret\":\"s3cret-pw\"}' \"$url\"\n"
                 "else\n"
                 "  echo 'credentials not found in native keychain'; exit 1\n"
                 "fi\n");
  ASSERT_EQ(::chmod(helper.c_str(), 0755), 0);
  const std::string auth = dir / "auth.json";
  write_file(auth, "{\"credHelpers\": {\"" + reg.host() + "\": \"berthtest\"}, \"credsStore\": \"berthtest\"}");
  DaemonOptions o;
  o.config_toml = "registry_auth_file = \"" + auth + "\"\ncredential_helper_timeout_seconds = 2\n";
  o.env = {"PATH=" + (dir / "bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  DaemonProcess d(o);
  ASSERT_TRUE(d.start()) << d.log();
  v1::PullImageResponse resp;
  grpc::Status s = pull(d, reg.host() + "/test/busybox:latest", &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = pull(d, reg.host() + "/test/busybox:other", &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(read_file(dir / "asked"), reg.host() + "\n") << "asked once, then cached";
  // credsStore for every other registry: it has nothing for this one, so the pull goes anonymous.
  s = pull(d, ref("test/busybox:latest"), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(read_file(dir / "asked"), reg.host() + "\n" + registry_->host() + "\n");

  // A helper that hangs: a new version of the file drops the cached answers.
  write_file(dir / "hang", "");
  write_file(auth, "{\"credHelpers\": {\"" + reg.host() + "\": \"berthtest\"}}");
  ASSERT_TRUE(remove(d, reg.host() + "/test/busybox:latest").ok());
  auto started = std::chrono::steady_clock::now();
  s = pull(d, reg.host() + "/test/busybox:latest", &resp);
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_NE(s.error_message().find("credential helper docker-credential-berthtest for " + reg.host()),
            std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("killed"), std::string::npos) << s.error_message();
  EXPECT_LT(took, std::chrono::seconds(20));
  // (The pattern's brackets keep pgrep's own shell from matching it.)
  EXPECT_TRUE(eventually([&] { return shell("pgrep -f '[d]ocker-credential-berthtest get' || true").empty(); }))
      << "the helper was killed";
  EXPECT_FALSE(status(d, reg.host() + "/test/busybox:latest").has_image());
  EXPECT_EQ(d.log().find("s3cret-pw"), std::string::npos);
}

// A pull cut midway keeps what it had: kubelet's retry continues the cut layer with a range
// request, so the registry serves each blob's bytes once in all (counted by the proxy); every
// blob is still verified whole. A registry without range support gets the whole layer again.
class ResumedPulls : public Images, public ::testing::WithParamInterface<bool> {};

TEST_P(ResumedPulls, ARetryAfterACutAt60PercentFetchesOnlyTheRest) {
  const bool ranges = GetParam();
  RegistryProcess reg;
  json big = json::parse(push_test_images(reg.url(), {"--only", "big", "--big", "32"}))["big"];
  int port = free_loopback_port();
  // Two cuts: the layer's first GET at 60%, then the pull's own retry of it right away, so the
  // pull fails and the next one (kubelet's) has to continue it.
  std::vector<std::string> args{std::to_string(port), reg.url(), "-", "-", "--cut-blobs-at", "0.6", "--cuts", "2",
                                "--cut-min-size",     "4000000"};
  if (!ranges) args.push_back("--no-range");
  ScriptServer proxy("token-proxy.py", args, port);
  DaemonOptions o;
  o.config_toml = "max_parallel_layer_fetches = 1\n";  // the layers one after another: the first big one is cut
  DaemonProcess d(o);
  ASSERT_TRUE(d.start()) << d.log();
  const std::string image = "127.0.0.1:" + std::to_string(port) + "/test/big:v1";
  v1::PullImageResponse resp;
  grpc::Status first = pull(d, image, &resp);
  ASSERT_EQ(first.error_code(), grpc::StatusCode::UNAVAILABLE) << first.error_message();
  const std::string cut_layer = big["layers"][1];
  const std::string partial = d.root() + "/images/partial/" + cut_layer.substr(7);
  ASSERT_TRUE(fs::exists(partial)) << "the cut layer's bytes are kept";
  const uint64_t kept = fs::file_size(partial);
  EXPECT_GT(kept, 0u);
  EXPECT_TRUE(fs::exists(d.root() + "/images/blobs/sha256/" + big["layers"][0].get<std::string>().substr(7)))
      << "whole blobs of the failed pull are kept";

  ASSERT_TRUE(pull(d, image, &resp).ok()) << d.log();
  EXPECT_EQ(resp.image_ref(), big["config"]);
  EXPECT_FALSE(fs::exists(partial));
  json stats = json::parse(shell("curl -sf http://127.0.0.1:" + std::to_string(port) + "/_stats"));
  ASSERT_EQ(stats["cuts_left"], 0) << stats.dump();
  uint64_t stored_total = 0, served_total = 0;
  for (const auto& l : big["layers"]) {
    std::string digest = l;
    uint64_t size = fs::file_size(d.root() + "/images/blobs/sha256/" + digest.substr(7));
    stored_total += size;
    uint64_t served = stats["served"].value("/v2/test/big/blobs/" + digest, uint64_t{0});
    served_total += served;
    if (digest == cut_layer) {
      EXPECT_NEAR(static_cast<double>(kept), static_cast<double>(size) * 0.6, 1.0) << "cut at 60%";
      // With ranges: 60% before the cut, nothing in the pull's own retry (cut where it starts),
      // 40% after. Without: 60% twice (the retry starts over), then the whole of it again.
      EXPECT_EQ(served, ranges ? size : size + 2 * kept) << digest;
      std::printf("cut layer: %llu bytes; served %llu in all (%.0f%%) %s range requests\n",
                  static_cast<unsigned long long>(size), static_cast<unsigned long long>(served),
                  100.0 * static_cast<double>(served) / static_cast<double>(size), ranges ? "with" : "without");
    } else {
      EXPECT_EQ(served, size) << digest << " was served once";
    }
  }
  EXPECT_NE(d.log().find("continuing a download cut short at " + std::to_string(kept)), std::string::npos);
  // The layers are whole: a container could stand on them (their snapshots are unpacked).
  for (const auto& l : big["layers"]) EXPECT_TRUE(fs::exists(snapshot(d, l))) << l;
}

// What a failed pull keeps is bounded: by bytes (the newest first; a layer's blob, its unpacked
// tree and its partial download count together) and by time, after which it goes without anything
// else happening. The big image's first layer is busybox's (about 1 MiB, 2 MiB unpacked), the cut
// one has 4.8 MiB when it fails.
TEST_F(Images, WhatAFailedPullKeepsIsBoundedInBytesAndTime) {
  RegistryProcess reg;
  json big = json::parse(push_test_images(reg.url(), {"--only", "big", "--big", "32"}))["big"];
  const std::string base_layer = big["layers"][0];
  const std::string cut_layer = big["layers"][1];
  const std::string manifest = big["manifest"];
  for (const char* budget : {"image_pull_keep_for_retry_mib = 4", "image_pull_keep_for_retry_mib = 2",
                             "image_pull_keep_for_retry_seconds = 2"}) {
    SCOPED_TRACE(budget);
    const bool by_time = std::string(budget).find("seconds") != std::string::npos;
    int port = free_loopback_port();
    ScriptServer proxy("token-proxy.py",
                       {std::to_string(port), reg.url(), "-", "-", "--cut-blobs-at", "0.6", "--cuts", "2",
                        "--cut-min-size", "4000000"},
                       port);
    DaemonOptions o;
    o.config_toml = std::string("max_parallel_layer_fetches = 1\n") + budget + "\n";
    DaemonProcess d(o);
    ASSERT_TRUE(d.start()) << d.log();
    v1::PullImageResponse resp;
    ASSERT_EQ(pull(d, "127.0.0.1:" + std::to_string(port) + "/test/big:v1", &resp).error_code(),
              grpc::StatusCode::UNAVAILABLE);
    const std::string partial = d.root() + "/images/partial/" + cut_layer.substr(7);
    const std::string manifest_blob = d.root() + "/images/blobs/sha256/" + manifest.substr(7);
    const std::string base_blob = d.root() + "/images/blobs/sha256/" + base_layer.substr(7);
    const uint64_t base_blob_size = fs::exists(base_blob) ? fs::file_size(base_blob) : 0;
    if (!by_time) {
      EXPECT_FALSE(fs::exists(partial)) << "4.8 MiB of a cut layer is over the budget";
      EXPECT_TRUE(fs::exists(manifest_blob)) << "the small blobs fit";
      if (std::string(budget).find("= 4") != std::string::npos) {
        EXPECT_TRUE(fs::exists(base_blob)) << "the first layer fits, unpacked too";
        EXPECT_TRUE(fs::exists(snapshot(d, base_layer)));
      } else {
        EXPECT_FALSE(fs::exists(base_blob)) << "its blob alone would fit; with its unpacked tree it does not";
        EXPECT_FALSE(fs::exists(snapshot(d, base_layer)));
      }
      continue;
    }
    EXPECT_TRUE(fs::exists(partial));
    EXPECT_TRUE(fs::exists(snapshot(d, base_layer)));
    EXPECT_LT(base_blob_size, 2u << 20) << "the 2 MiB case above needs its blob to fit alone";
    EXPECT_TRUE(eventually([&] { return !fs::exists(partial); }, std::chrono::seconds(15))) << "expired";
    EXPECT_FALSE(fs::exists(manifest_blob)) << "expired";
    EXPECT_FALSE(fs::exists(snapshot(d, base_layer))) << "expired";
    EXPECT_EQ(count_files(d.root() + "/images/partial"), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(RangeSupport, ResumedPulls, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "WithRanges" : "WithoutRanges"; });

// A running pull shows how far it has come, in /metrics by image and in a log line at a steady
// interval, so that a stuck pull can be told from a slow one; it is gone from both once done.
TEST_F(Images, ARunningPullShowsItsProgress) {
  const json& layered = (*digests_)["layered"];
  const std::string held_layer = layered["layers"][layered["layers"].size() - 1];
  Proxy proxy({"--hold", held_layer});
  const int metrics_port = free_loopback_port();
  DaemonOptions o;
  o.config_toml =
      "image_pull_progress_log_seconds = 1\nmetrics_address = \"127.0.0.1:" + std::to_string(metrics_port) + "\"\n";
  DaemonProcess d(o);
  ASSERT_TRUE(d.start()) << d.log();
  const std::string image = proxy.host() + "/test/layered:v1";
  auto pulled = std::async(std::launch::async, [&] {
    v1::PullImageResponse r;
    return pull(d, image, &r);
  });
  ASSERT_TRUE(eventually([&] { return proxy.held() == 1; }));
  auto metric = [&](const std::string& name) -> double {
    std::string text = shell("curl -sf http://127.0.0.1:" + std::to_string(metrics_port) + "/metrics");
    std::string key = name + "{image=\"" + image + "\"} ";
    size_t at = text.find(key);
    return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
  };
  double size = -1, done = -1;
  ASSERT_TRUE(eventually([&] {
    size = metric("berth_image_pull_size_bytes");
    done = metric("berth_image_pull_progress_bytes");
    return size > 0 && done > 0;  // the layers before the held one are in
  }));
  EXPECT_LT(done, size) << "the held layer is not";
  ASSERT_TRUE(eventually([&] {
    std::string log = d.log();
    size_t at = log.find("pull " + image + ": ");
    return at != std::string::npos &&
           log.find(" of " + std::to_string(static_cast<uint64_t>(size)) + " bytes (", at) != std::string::npos;
  })) << d.log();
  proxy.release();
  grpc::Status s = pulled.get();
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(metric("berth_image_pull_size_bytes"), -1) << "no longer running";
}

// An image's config is fetched beside its layers, not before them: while the registry holds the
// config's answer, the layer is fetched and unpacked; the pull ends once the config comes. The
// config is still checked before anything is recorded.
TEST_F(Images, TheConfigIsFetchedBesideTheLayers) {
  const json& bb = (*digests_)["busybox"];
  const std::string config = bb["config"];
  const std::string layer = bb["layers"][0];
  Proxy proxy({"--hold", config});
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  const std::string image = proxy.host() + "/test/busybox:latest";
  auto pulled = std::async(std::launch::async, [&] {
    v1::PullImageResponse r;
    return pull(d, image, &r);
  });
  ASSERT_TRUE(eventually([&] { return proxy.held() == 1; })) << d.log();
  EXPECT_TRUE(eventually([&] { return fs::exists(snapshot(d, layer)); })) << "the layer came while the config was held";
  EXPECT_FALSE(fs::exists(d.root() + "/images/blobs/sha256/" + config.substr(7)));
  EXPECT_TRUE(list(d).empty()) << "nothing is recorded before the config is in";
  proxy.release();
  grpc::Status s = pulled.get();
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(status(d, image, false).image().id(), config);
}

// The signature policy, with keys the test makes (openssl) and signatures stored as cosign stores
// them (tests/registry/push-signature.py): a scope signedBy an ECDSA P-256 and an Ed25519 key takes
// an image either signed, and says by which; unsigned, signed by another key, a signature for
// another digest or another repository, or an altered payload are refused with FAILED_PRECONDITION
// naming the scope and the reason, and leave nothing in the store; a reject scope refuses all, and
// what no scope covers goes by the default.
TEST_F(Images, SignaturePolicyAcceptsOnlyWhatItsKeysSigned) {
  RegistryProcess reg;
  push_test_images(reg.url(), {"--only", "busybox"});
  TempDir keys("berth-keys");
  shell("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + (keys / "ec.key") +
        " && openssl genpkey -algorithm ed25519 -out " + (keys / "ed.key") +
        " && openssl genpkey -algorithm ed25519 -out " + (keys / "other.key") + " && openssl pkey -in " +
        (keys / "ec.key") + " -pubout -out " + (keys / "ec.pub") + " && openssl pkey -in " + (keys / "ed.key") +
        " -pubout -out " + (keys / "ed.pub"));
  ASSERT_TRUE(fs::exists(keys / "ec.pub") && fs::exists(keys / "ed.pub"));
  const std::string script = std::string(BERTH_SOURCE_DIR) + "/tests/registry/push-signature.py ";
  auto copy = [&](const std::string& repo) {
    std::string out = shell(script + "copy " + reg.url() + " test/busybox:latest " + repo);
    return out.substr(0, out.find('\n'));
  };
  const std::string digest = copy("signed/ec");
  ASSERT_TRUE(is_sha256_digest(digest)) << digest;
  auto sign = [&](const std::string& repo, const std::string& key, const std::string& extra = "") {
    copy(repo);
    shell(script + "sign " + reg.url() + " " + repo + " " + digest + " " + (keys / key) + extra);
  };
  sign("signed/ec", "ec.key");
  sign("signed/ed", "ed.key");
  copy("signed/none");
  sign("signed/other-key", "other.key");
  const std::string another = "sha256:" + std::string(64, 'b');
  sign("signed/other-digest", "ec.key", " --signs " + another);
  sign("signed/other-repo", "ec.key", " --identity " + reg.host() + "/signed/ec");
  sign("signed/tampered", "ed.key", " --tamper");

  const std::string signed_scope = reg.host() + "/signed";
  DaemonOptions o;
  o.config_toml = "[signature_policy]\ndefault = \"insecureAcceptAnything\"\n[signature_policy.scopes.\"" +
                  signed_scope + "\"]\ntype = \"signedBy\"\nkeys = [\"" + (keys / "ec.pub") + "\", \"" +
                  (keys / "ed.pub") + "\"]\n[signature_policy.scopes.\"" + reg.host() + "/test\"]\ntype = \"reject\"\n";
  DaemonProcess d(o);
  ASSERT_TRUE(d.start()) << d.log();
  for (const auto& [repo, key] :
       {std::pair<std::string, std::string>{"signed/ec", "ec.pub"}, {"signed/ed", "ed.pub"}}) {
    const std::string image = reg.host() + "/" + repo + ":latest";
    v1::PullImageResponse resp;
    grpc::Status s = pull(d, image, &resp);
    ASSERT_TRUE(s.ok()) << image << ": " << s.error_message();
    auto st = status(d, image, true);
    ASSERT_EQ(st.info().count("signature_policy"), 1u);
    EXPECT_EQ(st.info().at("signature_policy"), "signedBy " + (keys / key) + " (scope \"" + signed_scope + "\")");
  }
  const std::set<std::string> blobs_before = entries(d.root() + "/images/blobs/sha256");
  const std::set<std::string> snapshots_before = entries(d.root() + "/images/snapshots");
  struct Refused {
    std::string image, why;
  };
  const std::string where = "signature policy scope \"" + signed_scope + "\"";
  for (const Refused& r : {
           Refused{"signed/none", where + " requires a signature by " + (keys / "ec.pub") + ", " + (keys / "ed.pub") +
                                      "; " + reg.host() + "/signed/none@" + digest + " has none"},
           Refused{"signed/other-key", where + " refused " + reg.host() + "/signed/other-key@" + digest +
                                           ": signature 1: made by none of the policy's keys"},
           Refused{"signed/other-digest", "signature 1: signs " + another + ", not " + digest},
           Refused{"signed/other-repo", "signature 1: signs the identity " + reg.host() + "/signed/ec, not " +
                                            reg.host() + "/signed/other-repo"},
           Refused{"signed/tampered", "signature 1: made by none of the policy's keys (or its payload was altered)"},
           Refused{"test/busybox", "signature policy scope \"" + reg.host() + "/test\" rejects every image"},
       }) {
    const std::string image = reg.host() + "/" + r.image + ":latest";
    v1::PullImageResponse resp;
    grpc::Status s = pull(d, image, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << image << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(r.why), std::string::npos) << s.error_message();
    EXPECT_FALSE(status(d, image).has_image()) << image;
    EXPECT_EQ(entries(d.root() + "/images/blobs/sha256"), blobs_before) << image << " left blobs";
    EXPECT_EQ(entries(d.root() + "/images/snapshots"), snapshots_before) << image;
    EXPECT_EQ(count_files(d.root() + "/images/partial"), 0u) << image;
  }
  // No scope covers the suite's registry: the default takes it.
  pull_ok(d, ref("test/busybox:latest"));
  auto st = status(d, ref("test/busybox:latest"), true);
  ASSERT_EQ(st.info().count("signature_policy"), 1u);
  EXPECT_EQ(st.info().at("signature_policy"), "insecureAcceptAnything (scope \"default\")");
}

// A policy that cannot be loaded stops berthd at start, naming the key and the file.
TEST_F(Images, ASignaturePolicyWithAnUnreadableKeyStopsTheStart) {
  TempDir dir("berth-keys");
  write_file(dir / "bad.pub", "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n");
  DaemonOptions o;
  o.wait_ready = false;
  o.config_toml = "[signature_policy.scopes.\"registry.example\"]\nkeys = [\"" + (dir / "bad.pub") + "\"]\n";
  DaemonProcess d(o);
  d.start();
  EXPECT_EQ(d.wait_exit(std::chrono::seconds(20)), 2) << d.log();
  EXPECT_NE(d.log().find("key 'signature_policy': signature policy scope registry.example: key " + (dir / "bad.pub") +
                         ": PEM public key: neither an ECDSA P-256"),
            std::string::npos)
      << d.log();
}

TEST_F(Images, HeldLayersOutliveTheImageRecord) {
  // The container side of removal: ImageManager in-process, as berthd's container manager uses it.
  TempDir dir;
  auto mgr = ImageManager::open({.dir = dir / "images", .containers_dir = dir / "containers"});
  ASSERT_TRUE(mgr.ok()) << mgr.status().message();
  auto img = (*mgr)->pull(ref("test/busybox:latest"), {});
  ASSERT_TRUE(img.ok()) << img.status().message();
  auto dirs = (*mgr)->snapshot_dirs(*img);
  ASSERT_EQ(dirs.size(), 1u);
  (*mgr)->hold(img->id);
  ASSERT_TRUE((*mgr)->remove(img->id).ok());
  EXPECT_FALSE((*mgr)->find(img->id).has_value());
  EXPECT_TRUE(fs::exists(dirs[0] + "/bin/busybox"));  // a container still stands on it
  (*mgr)->release(img->id);
  EXPECT_FALSE(fs::exists(dirs[0]));
}

TEST_F(Images, HeldRemovedImagesSurviveARestart) {
  // berthd's restart in-process: a new ImageManager on the same store, holds taken again by the
  // recovered containers, then finish_recovery.
  TempDir dir;
  ImageManagerOptions opt{.dir = dir / "images", .containers_dir = dir / "containers"};
  std::string held_id, dropped_id;
  std::vector<std::string> held_dirs, dropped_dirs;
  {
    auto mgr = ImageManager::open(opt);
    ASSERT_TRUE(mgr.ok()) << mgr.status().message();
    auto held = (*mgr)->pull(ref("test/busybox:latest"), {});
    auto dropped = (*mgr)->pull(ref("test/layered:v1"), {});
    ASSERT_TRUE(held.ok() && dropped.ok());
    held_id = held->id;
    dropped_id = dropped->id;
    held_dirs = (*mgr)->snapshot_dirs(*held);
    dropped_dirs = (*mgr)->snapshot_dirs(*dropped);
    (*mgr)->hold(held_id);
    (*mgr)->hold(dropped_id);
    ASSERT_TRUE((*mgr)->remove(held_id).ok());
    ASSERT_TRUE((*mgr)->remove(dropped_id).ok());
    EXPECT_TRUE((*mgr)->list().empty());
  }
  auto mgr = ImageManager::open(opt);
  ASSERT_TRUE(mgr.ok()) << mgr.status().message();
  EXPECT_TRUE((*mgr)->list().empty());
  EXPECT_FALSE((*mgr)->find(held_id).has_value());
  EXPECT_FALSE((*mgr)->find(ref("test/busybox:latest")).has_value());
  // Only busybox's container came back; layered's base layer is busybox's, its others go.
  (*mgr)->hold(held_id);
  ASSERT_TRUE((*mgr)->finish_recovery().ok());
  EXPECT_TRUE(fs::exists(held_dirs[0] + "/bin/busybox"));
  for (size_t i = 1; i < dropped_dirs.size(); ++i) EXPECT_FALSE(fs::exists(dropped_dirs[i])) << dropped_dirs[i];
  // Garbage collection (another image removed) spares the held one.
  auto other = (*mgr)->pull(ref("test/layered:v1"), {});
  ASSERT_TRUE(other.ok()) << other.status().message();
  ASSERT_TRUE((*mgr)->remove(other->id).ok());
  EXPECT_TRUE(fs::exists(held_dirs[0] + "/bin/busybox"));
  // Pulled again, the removed image is an image again; removed again, still held.
  auto again = (*mgr)->pull(ref("test/busybox:other"), {});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->id, held_id);
  EXPECT_EQ(again->repo_tags, std::vector<std::string>{ref("test/busybox:other")});
  EXPECT_EQ((*mgr)->list().size(), 1u);
  ASSERT_TRUE((*mgr)->remove(held_id).ok());
  EXPECT_TRUE((*mgr)->list().empty());
  EXPECT_TRUE(fs::exists(held_dirs[0] + "/bin/busybox"));
  (*mgr)->release(held_id);
  EXPECT_EQ(count_files(dir / "images/snapshots"), 0u);
  EXPECT_EQ(count_files(dir / "images/blobs"), 0u);
  EXPECT_EQ(json::parse(read_file(dir / "images/index.json"))["images"].size(), 0u);
}

TEST_F(Images, RemovalDuringAPullSparesWhatThePullUses) {
  // test/layered shares its base layer with test/busybox. Its last layer is held at the proxy
  // while busybox is removed: by then the pull has stored its manifest, reused the base
  // snapshot and unpacked two layers, none of which any image record names yet.
  const json& img = (*digests_)["layered"];
  Proxy proxy({"--hold", img["layers"][3].get<std::string>()});
  TempDir dir;
  const std::string images = dir / "images";
  auto mgr = ImageManager::open({.dir = images, .containers_dir = dir / "containers"});
  ASSERT_TRUE(mgr.ok()) << mgr.status().message();
  auto bb = (*mgr)->pull(ref("test/busybox:latest"), {});
  ASSERT_TRUE(bb.ok()) << bb.status().message();
  auto pulling = std::async(std::launch::async, [&] { return (*mgr)->pull(proxy.host() + "/test/layered:v1", {}); });
  auto blob = [&](const json& digest) { return images + "/blobs/sha256/" + digest.get<std::string>().substr(7); };
  auto snap = [&](const json& digest) { return images + "/snapshots/" + digest.get<std::string>().substr(7); };
  bool midway = eventually([&] {
    return proxy.held() == 1 && fs::exists(snap(img["layers"][1])) && fs::exists(snap(img["layers"][2])) &&
           fs::exists(blob(img["manifest"]));
  });
  // Both ways an image's last user goes: the record removed, and a container's hold released.
  (*mgr)->hold(bb->id);
  EXPECT_TRUE((*mgr)->remove(bb->id).ok());
  (*mgr)->release(bb->id);
  EXPECT_FALSE((*mgr)->find(bb->id).has_value());
  proxy.release();
  auto r = pulling.get();
  ASSERT_TRUE(midway) << proxy.stats().dump();
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::error_code ec;
  for (const auto& d : (*mgr)->snapshot_dirs(*r)) EXPECT_TRUE(fs::is_directory(d) && !fs::is_empty(d, ec)) << d;
  EXPECT_TRUE(fs::exists(snap(img["layers"][0]) + "/bin/busybox"));
  EXPECT_TRUE(fs::exists(blob(img["config"])));
  EXPECT_TRUE(fs::exists(blob(img["manifest"])));
  // Once the image goes too, nothing is left: the pull's leases ended with it.
  EXPECT_TRUE((*mgr)->remove(r->id).ok());
  EXPECT_EQ(count_files(images + "/snapshots"), 0u);
  EXPECT_EQ(count_files(images + "/blobs"), 0u);
}

TEST_F(Images, RecordsSurviveARestartAndFsInfoCountsThem) {
  TempDir shared;
  std::string root = shared / "root";
  {
    DaemonProcess d({}, shared / "a.sock", root, shared / "state");
    ASSERT_TRUE(d.start()) << d.log();
    pull_ok(d, ref("test/layered:v1"));
  }
  DaemonProcess d({}, shared / "b.sock", root, shared / "state");
  ASSERT_TRUE(d.start()) << d.log();
  auto images = list(d);
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0].id(), (*digests_)["layered"]["config"]);
  EXPECT_EQ(images[0].username(), "app");
  grpc::ClientContext ctx;
  v1::ImageFsInfoResponse fsinfo;
  ASSERT_TRUE(d.images()->ImageFsInfo(&ctx, v1::ImageFsInfoRequest(), &fsinfo).ok());
  ASSERT_EQ(fsinfo.image_filesystems_size(), 1);
  EXPECT_EQ(fsinfo.image_filesystems(0).fs_id().mountpoint(), root + "/images");
  EXPECT_GT(fsinfo.image_filesystems(0).used_bytes().value(), 1000000u);
  EXPECT_GT(fsinfo.image_filesystems(0).inodes_used().value(), 20u);
  EXPECT_GT(fsinfo.image_filesystems(0).timestamp(), 0);
  ASSERT_EQ(fsinfo.container_filesystems_size(), 1);
  EXPECT_EQ(fsinfo.container_filesystems(0).fs_id().mountpoint(), root + "/containers");
}

}  // namespace
}  // namespace berth::test
