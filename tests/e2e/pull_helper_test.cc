// berth-pull, the helper that runs each pull's registry I/O and layer unpacking: it runs confined
// (only unpacking's capabilities, no_new_privs, seccomp), berthd never maps libcurl or libarchive
// and keeps its memory through pulls, and a helper that crashes fails its pull, nothing more.
#include <signal.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>

#include "../../image/blob_store.h"
#include "../../image/manifest.h"
#include "../../image/pull_worker.h"
#include "berth/image_reference.h"
#include "berth/test/cri_client.h"
#include "berth/test/eventually.h"
#include "berth/test/helper_process.h"
#include "berth/test/hostile_peer.h"
#include "berth/test/temp_dir.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string status_field(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) {
      std::string v = line.substr(key.size() + 1);
      return v.substr(v.find_first_not_of(" \t"));
    }
  return "";
}

// berthd's children running berth-pull.
std::vector<pid_t> pull_helpers_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = std::stoi(name);
    if (status_field(pid, "PPid") == std::to_string(parent) && status_field(pid, "Name") == "berth-pull")
      out.push_back(pid);
  }
  return out;
}

bool dir_is_empty(const std::string& dir) { return fs::is_empty(dir); }

// A field of token-proxy.py's /_stats; -1 when it did not answer.
int proxy_stat(int port, const std::string& field) {
  std::string answer = http_get(port, "/_stats");
  size_t body = answer.find("\r\n\r\n");
  auto j = nlohmann::json::parse(body == std::string::npos ? "" : answer.substr(body + 4), nullptr, false);
  if (!j.is_object() || !j.contains(field)) return -1;
  return j[field].is_array() ? static_cast<int>(j[field].size()) : j.value(field, -1);
}

grpc::Status pull_with(CriClient& cri, const std::string& image, const v1::AuthConfig* auth) {
  v1::PullImageRequest req;
  req.mutable_image()->set_image(image);
  if (auth) *req.mutable_auth() = *auth;
  v1::PullImageResponse resp;
  grpc::ClientContext ctx;
  return cri.images().PullImage(&ctx, req, &resp);
}

class PullHelper : public DaemonTest {
 protected:
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    push_test_images(registry_->url());
    push_test_images(registry_->url(), {"--only", "big", "--big", "24"});
  }
  static void TearDownTestSuite() {
    delete registry_;
    registry_ = nullptr;
  }
  static std::string ref(const std::string& name) { return registry_->host() + "/test/" + name; }
  static inline RegistryProcess* registry_ = nullptr;
};

// The helper, driven directly: it fetches a manifest, a blob and unpacks a layer for its caller,
// with only the capabilities unpacking needs, no_new_privs and a seccomp filter, and is gone
// once its caller is done with it.
TEST_F(PullHelper, RunsConfinedAndDoesEachStep) {
  TempDir dir("berth-pull-worker");
  auto store = BlobStore::open(dir.path() + "/images");
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto image = parse_image_reference(ref("busybox:latest"));
  ASSERT_TRUE(image.ok());
  pull_protocol::Hello hello{.store = dir.path() + "/images"};
  size_t bytes = 0;
  // The helper beside the berthd under test, as that berthd runs it.
  const std::string helper = (fs::path(berthd_path()).parent_path() / "berth-pull").string();
  auto worker = PullWorker::start(helper, hello);
  ASSERT_TRUE(worker.ok()) << worker.status().message();
  pid_t pid = (*worker)->pid();
  // No step before a pull has begun.
  auto early = (*worker)->get_manifest("latest");
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.status().message().find("no begin before it"), std::string::npos) << early.status().message();
  ASSERT_TRUE((*worker)->begin(image->string(), {}, [&](size_t n) { bytes += n; }, {}).ok());

  auto m = (*worker)->get_manifest("latest");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_GT(bytes, 0u);
  // Confined before it read anything from the registry.
  EXPECT_EQ(status_field(pid, "NoNewPrivs"), "1");
  EXPECT_EQ(status_field(pid, "Seccomp"), "2");
  // chown, dac_override, fowner, fsetid, sys_admin (trusted.* xattrs), mknod, setfcap.
  const std::string kept = "000000008820001b";
  EXPECT_EQ(status_field(pid, "CapEff"), kept);
  EXPECT_EQ(status_field(pid, "CapPrm"), kept);
  EXPECT_EQ(status_field(pid, "CapBnd"), kept);
  EXPECT_EQ(status_field(pid, "CapInh"), "0000000000000000");

  auto parsed = parse_manifest(m->body, m->media_type, "manifest");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_FALSE(parsed->layers.empty());
  const Descriptor& layer = parsed->layers.front();
  ASSERT_TRUE((*worker)->fetch_blob(layer, "layer").ok());
  EXPECT_TRUE((*store)->has(layer.digest));
  fs::create_directory(dir.path() + "/snap");
  Status unpacked = (*worker)->unpack((*store)->path(layer.digest), dir.path() + "/snap", "layer");
  ASSERT_TRUE(unpacked.ok()) << unpacked.message();
  EXPECT_TRUE(fs::exists(dir.path() + "/snap/bin/busybox"));
  // A blob whose digest the registry does not have: the step fails with the registry's answer.
  Status missing = (*worker)->fetch_blob({.digest = "sha256:" + std::string(64, 'e'), .size = 3}, "blob e");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("blob e"), std::string::npos) << missing.message();
  // The same helper serves the next pull, of another repository.
  ASSERT_TRUE((*worker)->end_pull().ok());
  EXPECT_EQ((*worker)->pid(), pid);
  auto next = parse_image_reference(ref("layered:v1"));
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE((*worker)->begin(next->string(), {}, {}, {}).ok());
  auto m2 = (*worker)->get_manifest("v1");
  ASSERT_TRUE(m2.ok()) << m2.status().message();
  EXPECT_NE(m2->digest, m->digest);
  ASSERT_TRUE((*worker)->end_pull().ok());

  worker->reset();
  EXPECT_NE(::kill(pid, 0), 0) << "berth-pull " << pid << " is still there";
  EXPECT_TRUE(dir_is_empty(dir.path() + "/images/tmp"));
}

// The helper's two processes, seen while the registry holds a manifest: the fetcher (the helper's
// child, which reads every byte the registry sends) has no capability in any set, is nobody
// (uid and gid 65534) with no new privileges and a filter, and sees the file system read-only in a
// mount namespace of its own; the helper, which unpacks, has a network namespace with nothing in it.
TEST_F(PullHelper, TheFetcherHoldsNoCapabilityAndTheUnpackerNoNetwork) {
  const int port = free_loopback_port();
  ScriptServer proxy("token-proxy.py",
                     {std::to_string(port), registry_->url(), "-", "-", "--hold", "/manifests/latest"}, port);
  auto held = [&] { return proxy_stat(port, "held"); };
  struct Release {
    int port;
    ~Release() { (void)http_get(port, "/_release"); }
  } release{port};
  auto& d = daemon();
  CriClient cri(d);
  auto pull = std::async(std::launch::async,
                         [&] { return cri.pull_image("127.0.0.1:" + std::to_string(port) + "/test/busybox:latest"); });
  pid_t helper = 0, fetcher = 0;
  ASSERT_TRUE(eventually([&] {
    auto helpers = pull_helpers_of(d.pid());
    if (helpers.empty()) return false;
    helper = helpers.front();
    auto children = pull_helpers_of(helper);
    fetcher = children.empty() ? 0 : children.front();
    return fetcher > 0 && held() == 1;
  })) << "no fetcher seen while the manifest was held";
  for (const char* set : {"CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"})
    EXPECT_EQ(status_field(fetcher, set), "0000000000000000") << set;
  EXPECT_EQ(status_field(fetcher, "Uid"), "65534\t65534\t65534\t65534");
  EXPECT_EQ(status_field(fetcher, "Gid"), "65534\t65534\t65534\t65534");
  EXPECT_EQ(status_field(fetcher, "NoNewPrivs"), "1");
  EXPECT_EQ(status_field(fetcher, "Seccomp"), "2");
  auto ns = [](pid_t pid, const char* kind) {
    return fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/" + kind).string();
  };
  EXPECT_NE(ns(fetcher, "mnt"), ns(::getpid(), "mnt"));
  EXPECT_EQ(ns(fetcher, "net"), ns(::getpid(), "net")) << "the fetcher is the one that reaches registries";
  EXPECT_NE(ns(helper, "net"), ns(::getpid(), "net")) << "the unpacker reaches none";
  // Each maps only its own library: what waits idle between pulls holds nothing of the other's.
  auto maps = [](pid_t pid) { return read_file("/proc/" + std::to_string(pid) + "/maps"); };
  EXPECT_NE(maps(fetcher).find("libcurl"), std::string::npos);
  EXPECT_EQ(maps(fetcher).find("libarchive"), std::string::npos);
  EXPECT_NE(maps(helper).find("libarchive"), std::string::npos);
  EXPECT_EQ(maps(helper).find("libcurl"), std::string::npos);
  EXPECT_EQ(status_field(helper, "CapEff"), "000000008820001b");
  (void)http_get(port, "/_release");
  grpc::Status s = pull.get();
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// Nine images pulled, one of them five more times, the biggest removed and pulled again: berthd
// has never mapped libcurl or libarchive, no helper is left, and its RSS grew by a few MiB at most
// (the libraries and their malloc arenas once made it grow by 14 MiB; the store's garbage
// collection reading layers to see whether they were manifests, by 12 MiB more).
TEST_F(PullHelper, BerthdNeverMapsThePullLibrariesAndKeepsItsMemory) {
  auto& d = daemon({.config_toml = "image_pull_helper_idle_seconds = 1\n"});
  CriClient cri(d);
  long before = long(vm_rss_kib(d.pid()));
  for (const char* name : {"busybox:latest", "layered:v1", "multi:v1", "dlist:v1", "busybox:other", "hostile-etc:fifo",
                           "hostile-etc:links", "corrupt:v1", "big:v1"})
    (void)cri.pull_image(ref(name));  // the corrupt one fails, as it should
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(cri.pull_image(ref("busybox:latest")).ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(cri.remove_image(ref("big:v1")).ok());
    ASSERT_TRUE(cri.pull_image(ref("big:v1")).ok());
  }
  std::ifstream maps("/proc/" + std::to_string(d.pid()) + "/maps");
  std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("libcurl"), std::string::npos);
  EXPECT_EQ(text.find("libarchive"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return pull_helpers_of(d.pid()).empty(); }));
  long growth = long(vm_rss_kib(d.pid())) - before;
  std::printf("berthd RSS %ld KiB before the pulls, %ld KiB after\n", before, before + growth);
  EXPECT_LT(growth, 4 * 1024 + sanitizer_rss_slack_kib());
}

// A helper that crashes (as a decompressor might on a hostile archive) fails only its pull, with
// how it ended; berthd goes on, nothing of the transfer is left, and the next pull works.
TEST_F(PullHelper, ACrashedHelperFailsOnlyItsPull) {
  auto& d = daemon({.config_toml = "image_pull_helper_idle_seconds = 1\n"});
  CriClient cri(d);
  HostileRegistryProcess slow({"--trickle", "1"});
  auto pull = std::async(std::launch::async, [&] { return cri.pull_image(slow.ref("slow")); });
  std::vector<pid_t> helpers;
  ASSERT_TRUE(eventually([&] {
    helpers = pull_helpers_of(d.pid());
    return !helpers.empty() && status_field(helpers.front(), "Seccomp") == "2";
  }));
  // A sanitizer would report the SIGSEGV in berthd's log, failing the harness.
  const int crash = berthd_sanitized() ? SIGKILL : SIGSEGV;
  ASSERT_EQ(::kill(helpers.front(), crash), 0);
  grpc::Status s = pull.get();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL) << s.error_message();
  EXPECT_NE(s.error_message().find("ended before it answered: killed by signal " + std::to_string(crash)),
            std::string::npos)
      << s.error_message();
  EXPECT_EQ(::kill(d.pid(), 0), 0);
  EXPECT_TRUE(dir_is_empty(d.root() + "/images/tmp"));
  grpc::Status again = cri.pull_image(ref("busybox:latest"));
  EXPECT_TRUE(again.ok()) << again.error_message();
  EXPECT_TRUE(eventually([&] { return pull_helpers_of(d.pid()).empty(); }));
}

// critest's image benchmark (pull, status, remove, again) from one registry: one helper serves
// every pull, over the connections the first one opened; a pull from another registry gets a
// helper of its own, and the first stays idle meanwhile.
TEST_F(PullHelper, AHelperServesItsRegistrysPullsOneAfterAnotherOverItsConnections) {
  const int port = free_loopback_port();
  ScriptServer proxy("token-proxy.py", {std::to_string(port), registry_->url(), "-", "-"}, port);
  const std::string image = "127.0.0.1:" + std::to_string(port) + "/test/busybox:latest";
  auto& d = daemon({.config_toml = "image_pull_helper_idle_seconds = 600\n"});
  CriClient cri(d);
  std::set<pid_t> helpers;
  int first_connections = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(cri.pull_image(image));
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(image);
    v1::ImageStatusResponse st;
    grpc::ClientContext ctx;
    ASSERT_OK(cri.images().ImageStatus(&ctx, req, &st));
    ASSERT_OK(cri.remove_image(image));
    for (pid_t p : pull_helpers_of(d.pid())) helpers.insert(p);
    if (i == 0) first_connections = proxy_stat(port, "connections");
  }
  EXPECT_EQ(helpers.size(), 1u) << "one helper served the three pulls";
  EXPECT_GE(first_connections, 1);
  std::printf("[ figures  ] the first pull opened %d connections; after three pulls: %d\n", first_connections,
              proxy_stat(port, "connections"));
  EXPECT_EQ(proxy_stat(port, "connections"), first_connections) << "the later pulls connected again";
  ASSERT_OK(cri.pull_image(ref("busybox:latest")));
  auto now = pull_helpers_of(d.pid());
  EXPECT_EQ(now.size(), 2u);
  EXPECT_NE(std::find(now.begin(), now.end(), *helpers.begin()), now.end());
}

// A pull's credentials and the token they earned end with it: the next pull in the same helper
// without credentials sends no Authorization and is refused.
TEST_F(PullHelper, APullsCredentialsEndWithItInTheHelper) {
  const int port = free_loopback_port();
  ScriptServer proxy("token-proxy.py", {std::to_string(port), registry_->url(), "tokenuser", "tok3n-pw"}, port);
  const std::string host = "127.0.0.1:" + std::to_string(port);
  auto& d = daemon({.config_toml = "image_pull_helper_idle_seconds = 600\n"});
  CriClient cri(d);
  v1::AuthConfig creds;
  creds.set_username("tokenuser");
  creds.set_password("tok3n-pw");
  ASSERT_OK(pull_with(cri, host + "/test/busybox:latest", &creds));
  auto helpers = pull_helpers_of(d.pid());
  ASSERT_EQ(helpers.size(), 1u);
  const int sent = proxy_stat(port, "authorization");
  EXPECT_GE(sent, 1);
  grpc::Status anonymous = pull_with(cri, host + "/test/busybox:other", nullptr);
  EXPECT_EQ(anonymous.error_code(), grpc::StatusCode::UNAUTHENTICATED) << anonymous.error_message();
  EXPECT_EQ(proxy_stat(port, "authorization"), sent) << "the anonymous pull sent the earlier pull's token";
  EXPECT_EQ(pull_helpers_of(d.pid()), helpers) << "the anonymous pull ran in the same helper";
  ASSERT_OK(pull_with(cri, host + "/test/busybox:other", &creds));
}

// An idle helper exits after image_pull_helper_idle_seconds; one that was killed while idle is
// replaced at the next pull; with 0, a pull's helpers exit with it.
TEST_F(PullHelper, IdleHelpersExitAndAKilledOneIsReplaced) {
  auto& d = daemon({.config_toml = "image_pull_helper_idle_seconds = 3\n"});
  CriClient cri(d);
  ASSERT_OK(cri.pull_image(ref("busybox:latest")));
  auto idle = pull_helpers_of(d.pid());
  ASSERT_EQ(idle.size(), 1u);
  ASSERT_EQ(::kill(idle.front(), SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return status_field(idle.front(), "State").rfind("Z", 0) == 0; }));
  ASSERT_OK(cri.remove_image(ref("busybox:latest")));
  ASSERT_OK(cri.pull_image(ref("busybox:latest")));
  auto next = pull_helpers_of(d.pid());
  ASSERT_EQ(next.size(), 1u);
  EXPECT_NE(next.front(), idle.front());
  EXPECT_TRUE(eventually([&] { return pull_helpers_of(d.pid()).empty(); }, 15s));

  auto& none = daemon({.config_toml = "image_pull_helper_idle_seconds = 0\n"});
  CriClient cri0(none);
  ASSERT_OK(cri0.pull_image(ref("layered:v1")));
  EXPECT_TRUE(pull_helpers_of(none.pid()).empty());
}

}  // namespace
}  // namespace berth::test
