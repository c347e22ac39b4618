// berthd against peers that misbehave on purpose (tests/registry/hostile-registry.py, containers
// building huge trees, floods of stalled calls): it stays up, bounded in memory and threads, and
// keeps serving kubelet's quick calls. Bounds are asserted generously (a leak or an unbounded
// queue is far past them); timings are never asserted, only that calls end.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>

#include "berth/test/host_leftovers.h"
#include "berth/test/eventually.h"
#include "berth/test/hostile_peer.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

long threads_of(pid_t pid) { return thread_count(pid); }
long rss_kib(pid_t pid) { return long(vm_rss_kib(pid)); }
// RSS bounds hold for a plain berthd only (sanitizer_rss_slack_kib): a sanitizer's quarantine
// keeps freed memory resident.

// Waits until `pred` holds (polling), up to `timeout`.
// The registry's own count of open transfers and blobs served (GET /_stats).
class HostileRegistry : public HostileRegistryProcess {
 public:
  using HostileRegistryProcess::HostileRegistryProcess;
  nlohmann::json stats() const {
    return nlohmann::json::parse(shell("curl -s http://127.0.0.1:" + std::to_string(port()) + "/_stats"));
  }
};

class HostilePeers : public PodFixture {
 protected:
  grpc::Status pull(DaemonProcess& d, const std::string& ref, std::chrono::milliseconds client_deadline = 60000ms) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + client_deadline);
    v1::PullImageRequest req;
    req.mutable_image()->set_image(ref);
    v1::PullImageResponse resp;
    return d.images()->PullImage(&ctx, req, &resp);
  }
};

// 20 pulls from a registry trickling a byte every 2 s, each client giving up after 2 s: once they
// are gone, berthd has let go of the transfers and of the threads they held.
TEST_F(HostilePeers, PullsFromATricklingRegistryEndWithTheirClients) {
  HostileRegistry reg({"--trickle", "2"});
  auto& d = daemon();
  long threads_before = threads_of(d.pid()), rss_before = rss_kib(d.pid());
  std::vector<std::future<grpc::Status>> pulls;
  for (int i = 0; i < 20; ++i)
    pulls.push_back(
        std::async(std::launch::async, [&, i] { return pull(d, reg.ref("trickle" + std::to_string(i)), 2000ms); }));
  long threads_during = 0;
  for (auto& p : pulls) {
    threads_during = std::max(threads_during, threads_of(d.pid()));
    EXPECT_EQ(p.get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  EXPECT_TRUE(eventually([&] { return reg.stats()["open"] == 0; })) << reg.stats().dump();
  EXPECT_TRUE(eventually([&] { return threads_of(d.pid()) <= threads_before + 2; }))
      << "threads before " << threads_before << ", now " << threads_of(d.pid());
  EXPECT_LT(rss_kib(d.pid()) - rss_before, 32 * 1024 + sanitizer_rss_slack_kib());
  std::printf("trickling registry: threads %ld before, %ld during, %ld after; RSS %ld -> %ld KiB\n", threads_before,
              threads_during, threads_of(d.pid()), rss_before, rss_kib(d.pid()));
  EXPECT_NE(d.log().find("the client cancelled"), std::string::npos);
}

// A client that keeps waiting does not keep berthd waiting for ever: the pull's own deadline.
TEST_F(HostilePeers, APullIsGivenUpAtItsDeadline) {
  HostileRegistry reg({"--trickle", "1"});
  auto& d = daemon({.config_toml = "image_pull_timeout_seconds = 3\nimage_pull_idle_timeout_seconds = 60\n"});
  grpc::Status s = pull(d, reg.ref("slow"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("image_pull_timeout_seconds"), std::string::npos) << s.error_message();
  EXPECT_TRUE(eventually([&] { return reg.stats()["open"] == 0; }));
}

// Manifests made to exhaust: a thousand layers (more than an overlay mount of the store can
// stack) is refused before one blob is asked for; 60 000 layers (a 9 MB manifest) and a 512 MiB
// "manifest" are cut off at 8 MiB while they stream. berthd's memory stays flat.
TEST_F(HostilePeers, OversizedManifestsAreRefusedBeforeAnyFetch) {
  auto& d = daemon();
  long rss_before = rss_kib(d.pid());
  {
    HostileRegistry reg({"--layers", "1000"});
    grpc::Status s = pull(d, reg.ref("layers"));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
    EXPECT_NE(s.error_message().find("the image has 1000 layers; berth runs images of at most"), std::string::npos)
        << s.error_message();
    EXPECT_EQ(reg.stats()["blobs"], 0);
  }
  for (const std::vector<std::string>& mode : {std::vector<std::string>{"--layers", "60000"}, {"--huge", "512"}}) {
    HostileRegistry reg(mode);
    grpc::Status s = pull(d, reg.ref("huge"));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << mode[0] << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("larger than 8 MiB"), std::string::npos) << s.error_message();
    EXPECT_EQ(reg.stats()["blobs"], 0);
  }
  long growth = rss_kib(d.pid()) - rss_before;
  std::printf("oversized manifests: RSS %ld -> %ld KiB\n", rss_before, rss_kib(d.pid()));
  EXPECT_LT(growth, 48 * 1024 + sanitizer_rss_slack_kib());
}

// With 16 gRPC threads, 30 pulls stalled on a trickling registry take at most their share;
// Status and the list calls kubelet polls are answered all along.
TEST_F(HostilePeers, AFloodOfStalledPullsLeavesStatusServed) {
  HostileRegistry reg({"--trickle", "5"});
  auto& d = daemon({.config_toml = "max_concurrent_rpcs = 16\n"});
  std::vector<std::future<grpc::Status>> pulls;
  for (int i = 0; i < 30; ++i)
    pulls.push_back(
        std::async(std::launch::async, [&, i] { return pull(d, reg.ref("flood" + std::to_string(i)), 15000ms); }));
  std::this_thread::sleep_for(500ms);
  CriClient cri(d);
  int served = 0;
  for (int i = 0; i < 40; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::StatusResponse resp;
    if (cri.runtime().Status(&ctx, v1::StatusRequest(), &resp).ok()) ++served;
    grpc::ClientContext lctx;
    lctx.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::ListPodSandboxResponse lresp;
    if (cri.runtime().ListPodSandbox(&lctx, v1::ListPodSandboxRequest(), &lresp).ok()) ++served;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(served, 80);
  // One connection opens at most 16 calls at once and berthd has a thread for each, so every
  // refusal is the pull share's, which says what was refused and why.
  int refused = 0;
  for (auto& p : pulls) {
    grpc::Status s = p.get();
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++refused;
      EXPECT_NE(s.error_message().find("too many PullImage calls in progress (4"), std::string::npos)
          << s.error_message();
    } else {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_code() << ": " << s.error_message();
    }
  }
  EXPECT_EQ(refused, 26);
  std::printf("flood of 30 stalled pulls: %d refused, %d of 80 quick calls served, threads %ld\n", refused, served,
              threads_of(d.pid()));
}

// A container that built a 20 000-level directory tree in its writable layer: its stats answer,
// and it and its pod are removed, leaving nothing.
TEST_F(HostilePeers, AContainersTwentyThousandLevelTreeNeitherBlocksStatsNorRemoval) {
  // A cgroup parent of its own: the census below must not see other tests' pods.
  cgroup_parent_ = "/berth-test-hostile-" + std::to_string(::getpid());
  auto& cri = ready("pod", {.config_toml = "disk_usage_refresh_seconds = 1\n"});
  std::string id = run(shell_container("deep", "sleep 1000"));
  // Built straight in its writable layer: the tree a container makes with mkdir and mv, without
  // the minute that overlayfs and this disk's discards take for 20 000 levels made through the
  // mount (and again to delete them: that cost is the filesystem's, not berth's).
  std::string top = d_->root() + "/containers/" + id + "/upper";
  ASSERT_EQ(::mkdir((top + "/chain").c_str(), 0755), 0);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(::mkdir((top + "/up").c_str(), 0755), 0);
    ASSERT_EQ(::rename((top + "/chain").c_str(), (top + "/up/d").c_str()), 0);
    ASSERT_EQ(::rename((top + "/up").c_str(), (top + "/chain").c_str()), 0);
  }
  // The stats answer from the last figure while the background walk goes down the tree, and that
  // walk gets to the bottom: every level is counted.
  uint64_t inodes = 0;
  for (int i = 0; i < 600 && inodes < 20001; ++i) {
    grpc::ClientContext ctx;
    v1::ContainerStatsRequest req;
    req.set_container_id(id);
    v1::ContainerStatsResponse resp;
    ASSERT_OK(cri.runtime().ContainerStats(&ctx, req, &resp));
    inodes = resp.stats().writable_layer().inodes_used().value();
    if (inodes < 20001) std::this_thread::sleep_for(100ms);
  }
  EXPECT_GE(inodes, 20001u);
  ASSERT_OK(cri.stop_container(id, 0));
  ASSERT_OK(cri.remove_container(id));
  ASSERT_OK(cri.remove_pod(pod_));
  EXPECT_TRUE(cri.list_containers().empty());
  auto left = host_leftovers({d_->root(), d_->state(), cgroup_parent_, d_->network(), false});
  EXPECT_TRUE(left.empty()) << left.front();
}

}  // namespace
}  // namespace berth::test
