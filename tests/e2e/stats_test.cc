// Stats, events and metrics on a real berthd with runc, the CNI bridge and the local registry:
// container cpu/memory/swap/writable-layer figures checked against the kernel's own files, PSI
// and block IO of a throttled container doing direct IO, pod network counters under real traffic,
// ListContainerStats/ListPodSandboxStats filters, GetContainerEvents for two subscribers and for
// one that never reads, ListPodSandboxMetrics against ListMetricDescriptors, and the Prometheus
// text of /metrics.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "berth/test/cri_client.h"
#include "berth/test/eventually.h"
#include "berth/wall_clock.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_cgroup.h"
#include "berth/test/event_stream.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint64_t MiB = 1024 * 1024;

uint64_t read_u64(const std::string& path) { return std::stoull(read_file(path)); }

uint64_t stat_value(const std::string& memory_stat, const std::string& key) {
  std::istringstream in(memory_stat);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

class Stats : public PodFixture {
 protected:
  // After the fixture removed the pods: the cgroup parents ready_own_cgroup made (one level below
  // /berth-test-pods, which the fixture's own cleanup does not reach), also when the test failed.
  void TearDown() override {
    PodFixture::TearDown();
    for (const auto& parent : own_parents_) {
      for (const std::string& root : host_cgroup_roots()) {
        std::string dir = root + parent;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec))
          if (e.is_directory()) ::rmdir(e.path().c_str());
        ::rmdir(dir.c_str());
        ::rmdir((root + "/berth-test-pods").c_str());
      }
    }
  }

  // ready() with a pod cgroup parent of its own under /berth-test-pods, as kubelet's pod<uid>
  // cgroups are: the pod figures then cover this pod alone.
  CriClient& ready_own_cgroup(const std::string& pod_name, DaemonOptions options = {}) {
    d_ = &daemon(std::move(options));
    cri_ = std::make_unique<CriClient>(*d_);
    EXPECT_TRUE(cri_->pull_image(image()).ok());
    std::string parent = "/berth-test-pods/stats-" + std::to_string(::getpid()) + "-" + pod_name;
    own_parents_.push_back(parent);
    pod_config_ = test_pod(pod_name);
    pod_config_.set_log_directory(logs_->path());
    pod_config_.mutable_linux()->set_cgroup_parent(parent);
    grpc::Status s = cri_->run_pod(pod_config_, &pod_);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return *cri_;
  }

  v1::ContainerStats container_stats(const std::string& id) {
    v1::ContainerStatsResponse resp;
    grpc::Status s = cri_->container_stats(id, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.stats();
  }
  std::vector<v1::ContainerStats> list_container_stats(const v1::ContainerStatsFilter& f = {}) {
    grpc::ClientContext ctx;
    v1::ListContainerStatsRequest req;
    *req.mutable_filter() = f;
    v1::ListContainerStatsResponse resp;
    grpc::Status s = cri_->runtime().ListContainerStats(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return {resp.stats().begin(), resp.stats().end()};
  }
  v1::PodSandboxStats pod_stats(const std::string& id) {
    grpc::ClientContext ctx;
    v1::PodSandboxStatsRequest req;
    req.set_pod_sandbox_id(id);
    v1::PodSandboxStatsResponse resp;
    grpc::Status s = cri_->runtime().PodSandboxStats(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.stats();
  }
  std::vector<v1::PodSandboxStats> list_pod_stats(const v1::PodSandboxStatsFilter& f = {}) {
    grpc::ClientContext ctx;
    v1::ListPodSandboxStatsRequest req;
    *req.mutable_filter() = f;
    v1::ListPodSandboxStatsResponse resp;
    grpc::Status s = cri_->runtime().ListPodSandboxStats(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return {resp.stats().begin(), resp.stats().end()};
  }
  // The container's cgroup directory in controller `ctl` (cgroupfs driver, cgroup v1).
  std::string cgroup(const std::string& id, const std::string& ctl) {
    v1::ContainerStatusResponse r;
    EXPECT_TRUE(cri_->container_status(id, &r, true).ok());
    auto info = nlohmann::json::parse(r.info().at("info"));
    return "/sys/fs/cgroup/" + ctl + info["cgroupsPath"].get<std::string>();
  }
  // Where the kernel keeps the container's PSI: its cgroup2 directory, which on a v1 (hybrid) host
  // is under the cgroup2 mount at /sys/fs/cgroup/unified.
  std::string psi_dir(const std::string& id) {
    return fs::exists("/sys/fs/cgroup/cgroup.controllers") ? cgroup(id, "") : cgroup(id, "unified");
  }

  std::vector<std::string> own_parents_;
};

std::vector<std::string> ids_of(const std::vector<v1::ContainerStats>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(s.attributes().id());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// With background sampling (the default, every 10 s), memory and the rest come from the last
// sample, but the cpu counter is read per call: a caller that samples twice, a second apart, sees
// it move. This is what `crictl stats` and `crictl statsp` do (ListContainerStats or
// ListPodSandboxStats, their default 1 s sample, again), failing with "cpu stat is not updated
// during sample" when a running object's cpu timestamp did not change.
TEST_F(Stats, CpuIsReadPerCallTheRestFromTheBackgroundSample) {
  ready_own_cgroup("sampled");
  std::string id =
      run(test_container("busy", image(), {"dd", "if=/dev/zero", "of=/dev/null", "bs=1M", "count=100000000"}));
  auto by_id = [](const std::vector<v1::ContainerStats>& v, const std::string& want) {
    for (const auto& s : v)
      if (s.attributes().id() == want) return s;
    return v1::ContainerStats();
  };
  auto pod_by_id = [](const std::vector<v1::PodSandboxStats>& v, const std::string& want) {
    for (const auto& s : v)
      if (s.attributes().id() == want) return s;
    return v1::PodSandboxStats();
  };
  // As crictl: one listing, its sample time, the next listing.
  auto a = by_id(list_container_stats(), id);
  auto pa = pod_by_id(list_pod_stats(), pod_);
  std::this_thread::sleep_for(1s);
  auto b = by_id(list_container_stats(), id);
  auto pb = pod_by_id(list_pod_stats(), pod_);
  ASSERT_NE(b.cpu().usage_core_nano_seconds().value(), 0u);
  ASSERT_NE(pb.linux().cpu().usage_core_nano_seconds().value(), 0u);
  // A rate is over the time since the object's counter was last read, by any call: the pod
  // listing read the container's too, after `a` (as containerd's rates, which any stats call moves).
  auto last_read = a.cpu();
  for (const auto& c : pa.linux().containers())
    if (c.attributes().id() == id) last_read = c.cpu();
  for (auto [first, second] : {std::pair{last_read, b.cpu()}, std::pair{pa.linux().cpu(), pb.linux().cpu()}}) {
    const int64_t duration = second.timestamp() - first.timestamp();
    EXPECT_GE(duration, 900'000'000) << "crictl: cpu stat is not updated during sample";
    EXPECT_GT(second.usage_core_nano_seconds().value(), first.usage_core_nano_seconds().value());
    // The rate kubelet reads is over the same interval as crictl's percentage.
    double crictl =
        static_cast<double>(second.usage_core_nano_seconds().value() - first.usage_core_nano_seconds().value()) /
        static_cast<double>(duration) * 1e9;
    ASSERT_TRUE(second.has_usage_nano_cores());
    EXPECT_NEAR(static_cast<double>(second.usage_nano_cores().value()), crictl, crictl * 0.01 + 1e6);
  }
  // ContainerStats too (crictl top: two calls a second apart).
  auto c = container_stats(id);
  EXPECT_GT(c.cpu().timestamp(), b.cpu().timestamp());
  // Memory is the background sample's: two calls within its period give the same sample (a
  // refresh may fall between them).
  auto d = container_stats(id);
  if (c.memory().timestamp() == d.memory().timestamp()) {
    EXPECT_EQ(c.memory().working_set_bytes().value(), d.memory().working_set_bytes().value());
  }
  EXPECT_LE(c.memory().timestamp(), c.cpu().timestamp());
}

TEST_F(Stats, CpuAndMemoryOfABusyContainerMatchTheKernel) {
  if (!fs::exists("/sys/fs/cgroup/memory")) GTEST_SKIP() << "the figures below are read from cgroup v1 files";
  // Each call reads the kernel's files (no background sampling), so the figures can be checked
  // against the kernel's read just before and after the call.
  ready_own_cgroup("busy", {.config_toml = "stats_collection_period_seconds = 0\n"});
  // dd reads /dev/zero into one 64 MiB buffer again and again: it burns cpu (at most half a core,
  // by the quota) and keeps 64 MiB of anonymous memory touched.
  auto config = test_container("busy", image(), {"dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=100000000"});
  auto* res = config.mutable_linux()->mutable_resources();
  res->set_cpu_period(100000);
  res->set_cpu_quota(50000);
  res->set_memory_limit_in_bytes(256 * MiB);
  res->set_memory_swap_limit_in_bytes(384 * MiB);  // 128 MiB of swap allowed
  std::string id = run(config);
  const std::string cpuacct = cgroup(id, "cpuacct"), memory = cgroup(id, "memory");

  // The first sample has nothing to compute a rate from.
  auto first = container_stats(id);
  EXPECT_FALSE(first.cpu().has_usage_nano_cores());
  ASSERT_TRUE(eventually([&] { return container_stats(id).memory().working_set_bytes().value() >= 64 * MiB; }))
      << container_stats(id).memory().working_set_bytes().value();

  // Cumulative cpu lies between the kernel's counter read just before and just after the call.
  uint64_t before = read_u64(cpuacct + "/cpuacct.usage");
  auto a = container_stats(id);
  uint64_t after = read_u64(cpuacct + "/cpuacct.usage");
  EXPECT_GE(a.cpu().usage_core_nano_seconds().value(), before);
  EXPECT_LE(a.cpu().usage_core_nano_seconds().value(), after);
  std::this_thread::sleep_for(1s);
  auto b = container_stats(id);
  ASSERT_TRUE(b.cpu().has_usage_nano_cores());
  // usage_nano_cores is the rate between the previous sample and this one.
  double expected =
      static_cast<double>(b.cpu().usage_core_nano_seconds().value() - a.cpu().usage_core_nano_seconds().value()) /
      static_cast<double>(b.cpu().timestamp() - a.cpu().timestamp()) * 1e9;
  EXPECT_NEAR(static_cast<double>(b.cpu().usage_nano_cores().value()), expected, expected * 0.01 + 1e6);
  // It burns, within its quota of half a core (the host's other work may slow it down).
  EXPECT_GT(b.cpu().usage_nano_cores().value(), 50'000'000u);
  EXPECT_LT(b.cpu().usage_nano_cores().value(), 600'000'000u);
  EXPECT_GT(b.cpu().timestamp(), a.cpu().timestamp());

  // Memory: the 64 MiB buffer (and a little more: dd's binary, page tables), as the kernel counts.
  const auto& m = b.memory();
  uint64_t usage = read_u64(memory + "/memory.usage_in_bytes");
  std::string mstat = read_file(memory + "/memory.stat");
  uint64_t kernel_ws = usage - std::min(usage, stat_value(mstat, "total_inactive_file"));
  EXPECT_GE(m.working_set_bytes().value(), 64 * MiB);
  EXPECT_LE(m.working_set_bytes().value(), 96 * MiB);
  EXPECT_NEAR(static_cast<double>(m.working_set_bytes().value()), static_cast<double>(kernel_ws), 4.0 * MiB);
  EXPECT_NEAR(static_cast<double>(m.usage_bytes().value()), static_cast<double>(usage), 4.0 * MiB);
  EXPECT_GE(m.usage_bytes().value(), m.working_set_bytes().value());
  EXPECT_GE(m.rss_bytes().value(), 64 * MiB);
  EXPECT_NEAR(static_cast<double>(m.rss_bytes().value()), static_cast<double>(stat_value(mstat, "total_rss")),
              4.0 * MiB);
  EXPECT_EQ(m.available_bytes().value() + m.working_set_bytes().value(), 256 * MiB);  // against the limit
  EXPECT_GT(m.page_faults().value(), 0u);
  EXPECT_LE(m.major_page_faults().value(), m.page_faults().value());
  EXPECT_EQ(m.timestamp(), b.cpu().timestamp());
  if (fs::exists(memory + "/memory.memsw.usage_in_bytes")) {
    ASSERT_TRUE(b.has_swap());
    uint64_t swapped = read_u64(memory + "/memory.memsw.usage_in_bytes") - read_u64(memory + "/memory.usage_in_bytes");
    EXPECT_NEAR(static_cast<double>(b.swap().swap_usage_bytes().value()), static_cast<double>(swapped), 4.0 * MiB);
    EXPECT_EQ(b.swap().swap_usage_bytes().value() + b.swap().swap_available_bytes().value(), 128 * MiB);
  }

  // The pod's cgroup holds the pause and this container: at least the container's figures.
  auto pod = pod_stats(pod_);
  ASSERT_TRUE(pod.has_linux());
  EXPECT_EQ(pod.attributes().id(), pod_);
  EXPECT_GE(pod.linux().cpu().usage_core_nano_seconds().value(), b.cpu().usage_core_nano_seconds().value());
  EXPECT_GE(pod.linux().memory().working_set_bytes().value() + MiB, m.working_set_bytes().value());
  EXPECT_LE(pod.linux().memory().working_set_bytes().value(), m.working_set_bytes().value() + 16 * MiB);
  EXPECT_GE(pod.linux().process().process_count().value(), 2u);  // the pause and dd
  ASSERT_EQ(pod.linux().containers_size(), 1);
  EXPECT_EQ(pod.linux().containers(0).attributes().id(), id);
  std::this_thread::sleep_for(500ms);
  EXPECT_GT(pod_stats(pod_).linux().cpu().usage_nano_cores().value(), 50'000'000u);
}

// The writable layer's figure as the background refresh (every second here) next gives it: the
// first answer after the timestamp moved past `after`.
TEST_F(Stats, WritableLayerGrowsWithWrittenFiles) {
  auto& cri = ready("pod", {.config_toml = "disk_usage_refresh_seconds = 1\n"});
  std::string id = run(shell_container("writer", "sleep 100000"));
  auto a = container_stats(id).writable_layer();
  EXPECT_EQ(a.fs_id().mountpoint(), d_->root() + "/containers");
  EXPECT_GT(a.timestamp(), 0);
  EXPECT_GT(a.inodes_used().value(), 0u);  // the upper dir itself at least
  auto remeasured = [&](int64_t after) {
    v1::FilesystemUsage u;
    for (int i = 0; i < 100; ++i) {
      u = container_stats(id).writable_layer();
      if (u.timestamp() > after) break;
      std::this_thread::sleep_for(100ms);
    }
    EXPECT_GT(u.timestamp(), after) << "the writable layer was not measured again";
    return u;
  };
  exec_out(id, {"/bin/sh", "-c", "mkdir /w && dd if=/dev/zero of=/w/data bs=1048576 count=8 && touch /w/a /w/b"});
  int64_t written = wall_clock_ns();
  auto b = remeasured(written);
  EXPECT_GE(b.used_bytes().value(), a.used_bytes().value() + 8 * MiB);
  EXPECT_LE(b.used_bytes().value(), a.used_bytes().value() + 9 * MiB);
  EXPECT_EQ(b.inodes_used().value(), a.inodes_used().value() + 4);  // /w, data, a, b
  // ListContainerStats reads the same layer.
  auto listed = list_container_stats();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].writable_layer().used_bytes().value(), b.used_bytes().value());
  exec_out(id, {"rm", "-r", "/w"});
  auto c = remeasured(wall_clock_ns());
  EXPECT_LE(c.used_bytes().value(), a.used_bytes().value() + MiB);
  EXPECT_EQ(c.inodes_used().value(), a.inodes_used().value());
  // A stopped container keeps its layer, and its stats say so without cpu or memory.
  ASSERT_OK(cri.stop_container(id, 0));
  auto stopped = container_stats(id);
  EXPECT_FALSE(stopped.has_cpu());
  EXPECT_EQ(stopped.writable_layer().inodes_used().value(), a.inodes_used().value());
}

// A TCP connection to the pod IP from the host, through the test bridge.
bool send_to(const std::string& ip, int port, size_t bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return false;
  }
  std::string chunk(64 * 1024, 'n');
  size_t sent = 0;
  while (sent < bytes) {
    ssize_t n = ::write(fd, chunk.data(), std::min(chunk.size(), bytes - sent));
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[256];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
  ::close(fd);
  return sent == bytes;
}

TEST_F(Stats, PodNetworkCountersGrowWithTrafficIntoThePod) {
  auto& cri = ready();
  v1::PodSandboxStatusResponse ps;
  ASSERT_OK(cri.pod_status(pod_, &ps, false));
  const std::string ip = ps.status().network().ip();
  ASSERT_FALSE(ip.empty());
  run(shell_container("listener", "nc -l -p 5555 > /dev/null"));
  auto before = pod_stats(pod_);
  ASSERT_TRUE(before.linux().has_network());
  EXPECT_EQ(before.linux().network().default_interface().name(), "eth0");
  ASSERT_EQ(before.linux().network().interfaces_size(), 1);  // eth0; loopback is left out
  uint64_t rx0 = before.linux().network().default_interface().rx_bytes().value();
  uint64_t tx0 = before.linux().network().default_interface().tx_bytes().value();
  // The listener may take a moment to listen: a refused connection moves only a few bytes.
  ASSERT_TRUE(eventually([&] { return send_to(ip, 5555, MiB); }));
  v1::PodSandboxStats after;
  ASSERT_TRUE(eventually([&] {
    after = pod_stats(pod_);
    return after.linux().network().default_interface().rx_bytes().value() >= rx0 + MiB;
  })) << after.linux().network().default_interface().rx_bytes().value() - rx0;
  const auto& eth0 = after.linux().network().default_interface();
  EXPECT_LE(eth0.rx_bytes().value(), rx0 + MiB + 512 * 1024);  // 1 MiB and the TCP/IP overhead
  EXPECT_GT(eth0.tx_bytes().value(), tx0);                     // the acknowledgements
  EXPECT_EQ(eth0.rx_errors().value(), 0u);
  EXPECT_EQ(after.linux().network().interfaces(0).rx_bytes().value(), eth0.rx_bytes().value());
  EXPECT_GE(after.linux().network().timestamp(), before.linux().network().timestamp());
  // The same counter through ListPodSandboxMetrics.
  grpc::ClientContext ctx;
  v1::ListPodSandboxMetricsResponse metrics;
  ASSERT_OK(cri.runtime().ListPodSandboxMetrics(&ctx, {}, &metrics));
  ASSERT_EQ(metrics.pod_metrics_size(), 1);
  bool seen = false;
  for (const auto& m : metrics.pod_metrics(0).metrics()) {
    if (m.name() != "container_network_receive_bytes_total") continue;
    seen = true;
    EXPECT_EQ(m.label_values(6), "eth0");
    EXPECT_GE(m.value().value(), rx0 + MiB);
  }
  EXPECT_TRUE(seen);
}

TEST_F(Stats, ListFiltersByIdPodAndLabels) {
  auto& cri = ready("pod1");
  auto web = shell_container("a", "sleep 100000");
  (*web.mutable_labels())["tier"] = "web";
  (*web.mutable_annotations())["note"] = "kept";
  std::string a = run(web);
  auto db = shell_container("b", "sleep 100000");
  (*db.mutable_labels())["tier"] = "db";
  std::string b = run(db);
  auto pod2_config = test_pod("pod2");
  pod2_config.set_log_directory(logs_->path());
  std::string pod2;
  ASSERT_OK(cri.run_pod(pod2_config, &pod2));
  auto web2 = shell_container("c", "sleep 100000");
  (*web2.mutable_labels())["tier"] = "web";
  std::string c;
  ASSERT_OK(cri.create_container(pod2, web2, &c, pod2_config));  // created, never started

  EXPECT_EQ(ids_of(list_container_stats()), sorted({a, b, c}));
  v1::ContainerStatsFilter f;
  f.set_id(a);
  auto only_a = list_container_stats(f);
  ASSERT_EQ(ids_of(only_a), std::vector<std::string>{a});
  EXPECT_EQ(only_a[0].attributes().metadata().name(), "a");
  EXPECT_EQ(only_a[0].attributes().labels().at("tier"), "web");
  EXPECT_EQ(only_a[0].attributes().annotations().at("note"), "kept");
  EXPECT_TRUE(only_a[0].has_cpu());
  f.set_id(a.substr(0, 12));  // a unique prefix
  EXPECT_EQ(ids_of(list_container_stats(f)), std::vector<std::string>{a});
  f.set_id(std::string(64, 'f'));
  EXPECT_TRUE(list_container_stats(f).empty());
  f = {};
  f.set_pod_sandbox_id(pod_);
  EXPECT_EQ(ids_of(list_container_stats(f)), sorted({a, b}));
  f = {};
  (*f.mutable_label_selector())["tier"] = "web";
  EXPECT_EQ(ids_of(list_container_stats(f)), sorted({a, c}));
  f.set_pod_sandbox_id(pod2);
  auto only_c = list_container_stats(f);
  ASSERT_EQ(ids_of(only_c), std::vector<std::string>{c});
  EXPECT_FALSE(only_c[0].has_cpu());  // not running
  EXPECT_TRUE(only_c[0].has_writable_layer());

  std::vector<std::string> pods;
  for (const auto& p : list_pod_stats()) pods.push_back(p.attributes().id());
  EXPECT_EQ(sorted(pods), sorted({pod_, pod2}));
  v1::PodSandboxStatsFilter pf;
  pf.set_id(pod2);
  auto p2 = list_pod_stats(pf);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p2[0].attributes().metadata().name(), "pod2");
  ASSERT_EQ(p2[0].linux().containers_size(), 1);
  EXPECT_EQ(p2[0].linux().containers(0).attributes().id(), c);
  pf = {};
  (*pf.mutable_label_selector())["app"] = "pod1";
  auto p1 = list_pod_stats(pf);
  ASSERT_EQ(p1.size(), 1u);
  EXPECT_EQ(p1[0].attributes().id(), pod_);
  EXPECT_EQ(ids_of({p1[0].linux().containers().begin(), p1[0].linux().containers().end()}), sorted({a, b}));
  (*pf.mutable_label_selector())["app"] = "nobody";
  EXPECT_TRUE(list_pod_stats(pf).empty());

  // Single-object calls: by prefix, unknown ids, empty ids.
  EXPECT_EQ(container_stats(b.substr(0, 12)).attributes().id(), b);
  EXPECT_EQ(pod_stats(pod2.substr(0, 12)).attributes().id(), pod2);
  grpc::ClientContext c1, c2, c3, c4;
  v1::ContainerStatsRequest creq;
  v1::ContainerStatsResponse cresp;
  EXPECT_EQ(cri.runtime().ContainerStats(&c1, creq, &cresp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  creq.set_container_id(std::string(64, 'e'));
  EXPECT_EQ(cri.runtime().ContainerStats(&c2, creq, &cresp).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::PodSandboxStatsRequest preq;
  v1::PodSandboxStatsResponse presp;
  EXPECT_EQ(cri.runtime().PodSandboxStats(&c3, preq, &presp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  preq.set_pod_sandbox_id(std::string(64, 'e'));
  EXPECT_EQ(cri.runtime().PodSandboxStats(&c4, preq, &presp).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(Stats, PodSandboxMetricsAreTheDescribedOnes) {
  auto& cri = ready();
  auto config = shell_container("app", "sleep 100000");
  config.mutable_linux()->mutable_resources()->set_memory_limit_in_bytes(128 * MiB);
  std::string id = run(config);
  std::map<std::string, int> label_count;
  {
    grpc::ClientContext ctx;
    v1::ListMetricDescriptorsResponse resp;
    ASSERT_OK(cri.runtime().ListMetricDescriptors(&ctx, {}, &resp));
    for (const auto& d : resp.descriptors()) label_count[d.name()] = d.label_keys_size();
  }
  ASSERT_FALSE(label_count.empty());
  grpc::ClientContext ctx;
  v1::ListPodSandboxMetricsResponse resp;
  ASSERT_OK(cri.runtime().ListPodSandboxMetrics(&ctx, {}, &resp));
  ASSERT_EQ(resp.pod_metrics_size(), 1);
  const auto& pm = resp.pod_metrics(0);
  EXPECT_EQ(pm.pod_sandbox_id(), pod_);
  std::set<std::string> seen;
  auto check = [&](const v1::Metric& m) {
    seen.insert(m.name());
    ASSERT_TRUE(label_count.count(m.name())) << m.name() << " is not described";
    EXPECT_EQ(m.label_values_size(), label_count[m.name()]) << m.name();
    EXPECT_GT(m.timestamp(), 0) << m.name();
    EXPECT_TRUE(m.has_value()) << m.name();
  };
  for (const auto& m : pm.metrics()) check(m);
  ASSERT_EQ(pm.container_metrics_size(), 1);
  EXPECT_EQ(pm.container_metrics(0).container_id(), id);
  auto ws = container_stats(id).memory().working_set_bytes().value();
  for (const auto& m : pm.container_metrics(0).metrics()) {
    check(m);
    // container, id, image, name, namespace, pod
    EXPECT_EQ(m.label_values(0), "app");
    EXPECT_EQ(m.label_values(1), id);
    EXPECT_EQ(m.label_values(2), image());
    EXPECT_EQ(m.label_values(4), "berth-test");
    EXPECT_EQ(m.label_values(5), "pod");
    if (m.name() == "container_spec_memory_limit_bytes") {
      EXPECT_EQ(m.value().value(), 128 * MiB);
    } else if (m.name() == "container_memory_working_set_bytes") {
      EXPECT_NEAR(static_cast<double>(m.value().value()), static_cast<double>(ws), 4.0 * MiB);
    }
  }
  // PSI is reported only where the kernel keeps it for the container (and cpu "full" only since
  // Linux 5.13); every other described metric must be there.
  const std::string psi = psi_dir(id);
  auto has_full = [&](const char* res) {
    return read_file(psi + "/" + res + ".pressure").find("full ") != std::string::npos;
  };
  for (const auto& [name, n] : label_count) {
    if (name.rfind("container_pressure_", 0) == 0) {
      std::string res = name.substr(19, name.find('_', 19) - 19);  // cpu, memory, io
      if (!fs::exists(psi + "/" + res + ".pressure")) continue;
      if (name.find("_stalled_") != std::string::npos && !has_full(res.c_str())) continue;
    }
    EXPECT_TRUE(seen.count(name)) << name << " is described but never reported";
  }
}

// "total=N" of the "some" or "full" line of a PSI file, read here so the test shares nothing
// with berthd's parser; nullopt when the line is missing.
std::optional<uint64_t> psi_total_us(const std::string& file, const std::string& kind) {
  std::istringstream in(read_file(file));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind(kind + " ", 0) == 0 && std::regex_search(line, m, std::regex(R"( total=([0-9]+))")))
      return std::stoull(m[1]);
  }
  return std::nullopt;
}

// The whole disk holding `path`, "MAJ:MIN" as blkio throttle rules name it; "" when not a block
// device (tmpfs, overlay).
std::string disk_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  std::error_code ec;
  fs::path sys =
      fs::canonical("/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)), ec);
  if (ec) return "";
  if (fs::exists(sys / "partition")) sys = sys.parent_path();
  std::string dev = read_file(sys / "dev");
  while (!dev.empty() && dev.back() == '\n') dev.pop_back();
  return dev;
}

TEST_F(Stats, ThrottledContainerDoingDirectIoHasPsiAndIoFigures) {
  auto& cri = ready_own_cgroup("psi");
  // A busy loop held to a fifth of a core: runnable and throttled most of the time, so its cpu
  // "some" stall grows by most of each second.
  auto config = shell_container("stalled", "while :; do :; done");
  config.mutable_linux()->mutable_resources()->set_cpu_period(100000);
  config.mutable_linux()->mutable_resources()->set_cpu_quota(20000);
  std::string id = run(config);
  const std::string psi = psi_dir(id);
  if (!fs::exists(psi + "/cpu.pressure"))
    GTEST_SKIP() << "the kernel keeps no PSI for the container (" << psi
                 << "/cpu.pressure is missing: no CONFIG_PSI, psi=0, or a v1 host without the cgroup2 mount)";

  // ContainerStats: cpu and memory PSI and IoUsage with its PSI, totals in nanoseconds.
  ASSERT_TRUE(eventually([&] { return psi_total_us(psi + "/cpu.pressure", "some").value_or(0) > 100'000; }));
  uint64_t before = *psi_total_us(psi + "/cpu.pressure", "some");
  auto st = container_stats(id);
  uint64_t after = *psi_total_us(psi + "/cpu.pressure", "some");
  ASSERT_TRUE(st.cpu().has_psi());
  ASSERT_TRUE(st.cpu().psi().has_some());
  EXPECT_GE(st.cpu().psi().some().total(), before * 1000);
  EXPECT_LE(st.cpu().psi().some().total(), after * 1000);
  EXPECT_GE(st.cpu().psi().some().avg10(), 0.0);
  EXPECT_LE(st.cpu().psi().some().avg10(), 100.0);
  EXPECT_EQ(st.cpu().psi().has_full(), psi_total_us(psi + "/cpu.pressure", "full").has_value());
  ASSERT_TRUE(st.memory().has_psi());
  EXPECT_TRUE(st.memory().psi().has_some());
  EXPECT_TRUE(st.memory().psi().has_full());
  ASSERT_TRUE(st.has_io());
  EXPECT_EQ(st.io().timestamp(), st.memory().timestamp());  // both the sample's (cpu usage is read per call)
  ASSERT_TRUE(st.io().has_psi());
  EXPECT_TRUE(st.io().psi().has_some());
  EXPECT_TRUE(st.io().psi().has_full());

  // The pod has a cgroup of its own (the container's parent): its PSI is that cgroup's. (Not
  // compared with the container's: the kernel keeps each cgroup's totals on its own.)
  const std::string pod_psi = fs::path(psi).parent_path();
  before = psi_total_us(pod_psi + "/cpu.pressure", "some").value_or(0);
  auto pod = pod_stats(pod_);
  after = psi_total_us(pod_psi + "/cpu.pressure", "some").value_or(0);
  ASSERT_TRUE(pod.linux().cpu().has_psi());
  EXPECT_GT(pod.linux().cpu().psi().some().total(), 0u);
  EXPECT_GE(pod.linux().cpu().psi().some().total(), before * 1000);
  EXPECT_LE(pod.linux().cpu().psi().some().total(), after * 1000);
  EXPECT_TRUE(pod.linux().memory().has_psi());
  ASSERT_TRUE(pod.linux().has_io());
  EXPECT_TRUE(pod.linux().io().psi().has_some());
  ASSERT_EQ(pod.linux().containers_size(), 1);
  EXPECT_TRUE(pod.linux().containers(0).cpu().has_psi());

  // Block IO the kernel counts: v2 always; v1's blk-throttle only for IO that met a limit on
  // recent kernels, so on v1 the container gets a limit far above what it does.
  const bool v2 = fs::exists("/sys/fs/cgroup/cgroup.controllers");
  bool io_counted = v2;
  if (!v2) {
    const std::string disk = disk_of(d_->root());
    const std::string blkio = cgroup(id, "blkio");
    for (const char* rule : {"/blkio.throttle.read_bps_device", "/blkio.throttle.write_bps_device"})
      std::ofstream(blkio + rule) << disk << " 1099511627776\n";
    io_counted =
        !disk.empty() && read_file(blkio + "/blkio.throttle.write_bps_device").find(disk + " ") != std::string::npos;
  }
  if (io_counted) {
    exec_out(
        id,
        {"/bin/sh", "-c",
         "dd if=/dev/zero of=/io bs=1048576 count=8 oflag=direct && dd if=/io of=/dev/null bs=1048576 iflag=direct"});
  } else {
    RecordProperty("io_growth", "not checked: no throttle rule could be set on the writable layer's disk");
  }

  // Descriptors name the IO and PSI metrics; the container's metrics carry them.
  std::set<std::string> described;
  {
    grpc::ClientContext ctx;
    v1::ListMetricDescriptorsResponse resp;
    ASSERT_OK(cri.runtime().ListMetricDescriptors(&ctx, {}, &resp));
    for (const auto& d : resp.descriptors()) described.insert(d.name());
  }
  const std::vector<std::string> io_names = {"container_fs_reads_bytes_total", "container_fs_writes_bytes_total",
                                             "container_fs_reads_total", "container_fs_writes_total"};
  std::vector<std::string> psi_names;
  for (const char* res : {"cpu", "memory", "io"})
    for (const char* kind : {"waiting", "stalled"})
      psi_names.push_back(std::string("container_pressure_") + res + "_" + kind + "_seconds_total");
  for (const auto& n : io_names) EXPECT_TRUE(described.count(n)) << n;
  for (const auto& n : psi_names) EXPECT_TRUE(described.count(n)) << n;

  std::map<std::string, uint64_t> values;
  ASSERT_TRUE(eventually([&] {
    grpc::ClientContext ctx;
    v1::ListPodSandboxMetricsResponse resp;
    EXPECT_TRUE(cri.runtime().ListPodSandboxMetrics(&ctx, {}, &resp).ok());
    values.clear();
    for (const auto& pm : resp.pod_metrics())
      for (const auto& cm : pm.container_metrics())
        if (cm.container_id() == id)
          for (const auto& m : cm.metrics()) {
            values[m.name()] = m.value().value();
            EXPECT_EQ(m.label_values_size(), 6) << m.name();
            if (m.name().rfind("container_fs_", 0) == 0 || m.name().rfind("container_pressure_", 0) == 0) {
              EXPECT_EQ(m.metric_type(), v1::COUNTER) << m.name();
            }
          }
    // Whole seconds: wait for the first one of cpu stall.
    return values["container_pressure_cpu_waiting_seconds_total"] >= 1;
  })) << values["container_pressure_cpu_waiting_seconds_total"];
  for (const auto& n : psi_names) EXPECT_TRUE(values.count(n)) << n << " not reported";
  EXPECT_LE(values["container_pressure_cpu_waiting_seconds_total"],
            *psi_total_us(psi + "/cpu.pressure", "some") / 1'000'000);
  for (const auto& n : io_names) EXPECT_TRUE(values.count(n)) << n << " not reported";
  if (io_counted) {
    EXPECT_GE(values["container_fs_writes_bytes_total"], 8 * MiB);
    EXPECT_GE(values["container_fs_reads_bytes_total"], 8 * MiB);
    EXPECT_GE(values["container_fs_writes_total"], 8u);
    EXPECT_GE(values["container_fs_reads_total"], 8u);
    EXPECT_LE(values["container_fs_writes_bytes_total"], 64 * MiB);  // the runtime's own IO is small
  }
}

TEST_F(Stats, EventsOfALifecycleReachTwoSubscribersInOrder) {
  auto& cri = ready();
  EventStream one(*d_, true), two(*d_, true);
  std::string id = run(shell_container("ev", "trap 'exit 0' TERM; echo trapped; while true; do sleep 0.1; done"));
  // Stopped only once the trap is set: a TERM before it is ignored (pid 1), and the kill after
  // the grace period would make the exit 137.
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/ev.log", "trapped")) << log_of("ev");
  ASSERT_OK(cri.stop_container(id, 10));
  ASSERT_OK(cri.remove_container(id));
  for (EventStream* s : {&one, &two}) {
    auto evs = s->about(id, 4);
    ASSERT_EQ(evs.size(), 4u);
    const v1::ContainerEventType types[] = {v1::CONTAINER_CREATED_EVENT, v1::CONTAINER_STARTED_EVENT,
                                            v1::CONTAINER_STOPPED_EVENT, v1::CONTAINER_DELETED_EVENT};
    const v1::ContainerState states[] = {v1::CONTAINER_CREATED, v1::CONTAINER_RUNNING, v1::CONTAINER_EXITED};
    int64_t last = 0;
    for (size_t i = 0; i < 4; ++i) {
      const auto& ev = evs[i];
      EXPECT_EQ(ev.container_event_type(), types[i]) << i;
      EXPECT_GE(ev.created_at(), last) << i;
      last = ev.created_at();
      EXPECT_EQ(ev.pod_sandbox_status().id(), pod_) << i;
      EXPECT_EQ(ev.pod_sandbox_status().state(), v1::SANDBOX_READY) << i;
      EXPECT_EQ(ev.pod_sandbox_status().metadata().name(), "pod") << i;
      const v1::ContainerStatus* st = status_of(ev, id);
      if (i == 3) {
        EXPECT_EQ(st, nullptr);  // deleted: no longer among the pod's containers
        continue;
      }
      ASSERT_NE(st, nullptr) << i;
      EXPECT_EQ(st->state(), states[i]) << i;
      EXPECT_EQ(st->metadata().name(), "ev");
    }
    EXPECT_EQ(status_of(evs[2], id)->exit_code(), 0);
    EXPECT_EQ(status_of(evs[2], id)->reason(), "Completed");
  }
}

TEST_F(Stats, ContainersThatExitAtOnceAreToldStartedBeforeStopped) {
  auto& cri = ready();
  EventStream events(*d_, true);
  // Started eight at a time, so their exits race their starts (berthd once told some of them
  // STOPPED before STARTED: the exit watch began before the start was recorded).
  std::vector<std::string> ids;
  for (int round = 0; round < 6; ++round) {
    std::vector<std::string> batch(8);
    for (size_t i = 0; i < batch.size(); ++i)
      ASSERT_OK(cri.create_container(
          pod_, shell_container("quick-" + std::to_string(round) + "-" + std::to_string(i), "exit 3"), &batch[i],
          pod_config_));
    std::vector<std::thread> starts;
    for (const auto& id : batch) starts.emplace_back([&cri, id] { EXPECT_TRUE(cri.start_container(id).ok()); });
    for (auto& t : starts) t.join();
    ids.insert(ids.end(), batch.begin(), batch.end());
  }
  for (const auto& id : ids) {
    auto q = events.about(id, 3);
    ASSERT_EQ(q.size(), 3u) << id;
    EXPECT_EQ(q[0].container_event_type(), v1::CONTAINER_CREATED_EVENT) << id;
    EXPECT_EQ(q[1].container_event_type(), v1::CONTAINER_STARTED_EVENT) << id;
    EXPECT_EQ(q[2].container_event_type(), v1::CONTAINER_STOPPED_EVENT) << id;
    const v1::ContainerStatus* st = status_of(q[2], id);
    ASSERT_NE(st, nullptr) << id;
    EXPECT_EQ(st->state(), v1::CONTAINER_EXITED) << id;
    EXPECT_EQ(st->exit_code(), 3) << id;
  }
}

TEST_F(Stats, ASubscriberThatNeverReadsIsDroppedAndNothingElseWaits) {
  auto& cri = ready("pod", {.config_toml = "event_subscriber_backlog = 4\n"});
  // Large events (every event carries the pod's container statuses, annotations included) fill
  // the stalled connection's buffers after a few events, so the backlog is reached quickly.
  const std::string big(64 * 1024, 'x');
  for (int i = 0; i < 4; ++i) {
    auto filler = shell_container("filler-" + std::to_string(i), "true");
    (*filler.mutable_annotations())["big"] = big;
    std::string id;
    ASSERT_OK(cri.create_container(pod_, filler, &id, pod_config_));
  }
  EventStream stalled(*d_, false);  // subscriber 1: never reads
  EventStream reader(*d_, true);    // subscriber 2
  std::string last;
  int cycles = 0;
  for (; cycles < 300 && d_->log().find("dropped subscriber") == std::string::npos; ++cycles) {
    ASSERT_OK(
        cri.create_container(pod_, shell_container("churn-" + std::to_string(cycles), "true"), &last, pod_config_));
    ASSERT_OK(cri.remove_container(last));
  }
  RecordProperty("cycles_until_dropped", cycles);
  ASSERT_NE(d_->log().find("GetContainerEvents: dropped subscriber 1: it fell 4 events behind"), std::string::npos)
      << "after " << cycles << " cycles\n"
      << d_->log();
  // The reader kept up with every one of them.
  EXPECT_EQ(reader.about(last, 2).size(), 2u);
  // berthd goes on: other calls answer, and the reader still gets new events.
  grpc::ClientContext vctx;
  v1::VersionResponse version;
  ASSERT_OK(cri.runtime().Version(&vctx, v1::VersionRequest(), &version));
  std::string after = run(shell_container("after", "sleep 100000"));
  EXPECT_EQ(status(after).state(), v1::CONTAINER_RUNNING);
  auto evs = reader.about(after, 2);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[1].container_event_type(), v1::CONTAINER_STARTED_EVENT);
  // Only the stalled subscriber was dropped, and its rpc ended at once (its call cancelled), not
  // when its client finally reads: it holds no rpc thread.
  EXPECT_EQ(d_->log().find("dropped subscriber 2:"), std::string::npos);
  const std::string ended = "rpc GetContainerEvents subscriber=1 RESOURCE_EXHAUSTED";
  for (int i = 0; i < 100 && d_->log().find(ended) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(d_->log().find(ended), std::string::npos) << d_->log();
  grpc::Status end = stalled.drain();
  EXPECT_TRUE(end.error_code() == grpc::StatusCode::CANCELLED ||
              end.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
      << end.error_code() << ": " << end.error_message();
}

// An HTTP/1.0 GET of the body, written here so the test shares nothing with the server's code.
std::string http_body(int port, const std::string& target) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    std::string req = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    (void)!::write(fd, req.data(), req.size());
    char buf[8192];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t body = out.find("\r\n\r\n");
  return body == std::string::npos ? "" : out.substr(body + 4);
}

// Prometheus text format 0.0.4, every line checked: HELP and TYPE once per family and before its
// samples, sample names belonging to a declared family, label syntax and escapes, numeric values,
// cumulative histogram buckets ending in +Inf equal to _count. Returns the samples by series text.
std::map<std::string, double> parse_prometheus(const std::string& text) {
  static const std::regex help(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*$)");
  static const std::regex type(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
  static const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*,?\})? ([-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|Inf|NaN))( -?[0-9]+)?$)");
  std::map<std::string, double> out;
  std::map<std::string, std::string> types;
  std::set<std::string> helps, sampled;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::istringstream in(text);
  int n = 0;
  std::string prev_bucket_series;
  double prev_bucket = 0;
  std::map<std::string, double> count_of_inf;  // "<name>_count{labels}" -> its +Inf bucket
  for (std::string line; std::getline(in, line);) {
    ++n;
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      EXPECT_TRUE(helps.insert(m[1]).second) << "line " << n << ": second HELP: " << line;
      continue;
    }
    if (std::regex_match(line, m, type)) {
      EXPECT_TRUE(types.emplace(m[1], m[2]).second) << "line " << n << ": second TYPE: " << line;
      EXPECT_FALSE(sampled.count(m[1])) << "line " << n << ": TYPE after samples: " << line;
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      ADD_FAILURE() << "line " << n << " is not Prometheus text: '" << line << "'";
      continue;
    }
    std::string name = m[1], family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string s(suffix);
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
          types.count(name.substr(0, name.size() - s.size())) &&
          types[name.substr(0, name.size() - s.size())] == "histogram")
        family = name.substr(0, name.size() - s.size());
    }
    EXPECT_TRUE(types.count(family)) << "line " << n << ": no TYPE for " << name;
    sampled.insert(family);
    std::string series = line.substr(0, line.rfind(' '));
    if (m[5].matched) series = series.substr(0, series.rfind(' '));
    const std::string v = m[3].str();
    double value = v == "+Inf" || v == "Inf" ? INFINITY : v == "-Inf" ? -INFINITY : std::stod(v);
    EXPECT_TRUE(out.emplace(series, value).second) << "line " << n << ": series twice: " << series;
    if (name != family && name.substr(family.size()) == "_bucket") {
      // The same series without le: buckets of one series are cumulative.
      std::string base = std::regex_replace(series, std::regex(R"(,?le="[^"]*")"), "");
      if (base == prev_bucket_series) {
        EXPECT_GE(value, prev_bucket) << "line " << n;
      }
      prev_bucket_series = base;
      prev_bucket = value;
      if (series.find("le=\"+Inf\"") != std::string::npos) {
        std::string count = base;
        count.replace(family.size(), 7, "_count");
        if (count.size() > 2 && count.compare(count.size() - 2, 2, "{}") == 0) count.resize(count.size() - 2);
        count_of_inf[count] = value;
      }
    }
  }
  for (const auto& [count, inf] : count_of_inf) {
    EXPECT_TRUE(out.count(count)) << count;
    EXPECT_EQ(out[count], inf) << count;
  }
  return out;
}

// Sum of every sample of `name` whose labels contain each of `want`.
double sum_of(const std::map<std::string, double>& samples, const std::string& name,
              const std::vector<std::string>& want = {}) {
  double sum = 0;
  for (const auto& [series, v] : samples) {
    if (series.compare(0, name.size(), name) != 0 || (series.size() > name.size() && series[name.size()] != '{'))
      continue;
    bool all = true;
    for (const auto& w : want) all = all && series.find(w) != std::string::npos;
    if (all) sum += v;
  }
  return sum;
}

TEST_F(Stats, MetricsEndpointIsPrometheusTextAndItsCountersMove) {
  int port = free_loopback_port();
  auto& cri = ready("pod", {.config_toml = "metrics_address = \"127.0.0.1:" + std::to_string(port) + "\"\n"});
  auto m0 = parse_prometheus(http_body(port, "/metrics"));
  // The pull, the pod (with its CNI ADD) and the readiness probe already happened.
  EXPECT_GT(sum_of(m0, "berth_image_pull_bytes_total"), 0);
  EXPECT_EQ(sum_of(m0, "berth_image_pull_duration_seconds_count", {"result=\"ok\""}), 1);
  EXPECT_EQ(sum_of(m0, "berth_rpc_requests_total", {"method=\"PullImage\"", "code=\"OK\""}), 1);
  EXPECT_EQ(sum_of(m0, "berth_rpc_requests_total", {"method=\"RunPodSandbox\"", "code=\"OK\""}), 1);
  EXPECT_EQ(sum_of(m0, "berth_sandbox_start_duration_seconds_count", {"result=\"ok\""}), 1);
  EXPECT_GE(
      sum_of(m0, "berth_cni_plugin_duration_seconds_count", {"plugin=\"bridge\"", "command=\"ADD\"", "result=\"ok\""}),
      1);
  EXPECT_EQ(sum_of(m0, "berth_cni_plugin_busy_retries_total"), 0);
  EXPECT_EQ(sum_of(m0, "berth_sandboxes_ready"), 1);
  EXPECT_EQ(sum_of(m0, "berth_containers_running"), 0);
  EXPECT_GE(sum_of(m0, "berth_rpc_duration_seconds_count", {"method=\"RunPodSandbox\""}), 1);

  std::string id = run(shell_container("app", "sleep 100000"));
  v1::ContainerStatsResponse unused;
  grpc::ClientContext ctx;
  v1::ContainerStatsRequest req;
  req.set_container_id(std::string(64, 'e'));
  EXPECT_EQ(cri.runtime().ContainerStats(&ctx, req, &unused).error_code(), grpc::StatusCode::NOT_FOUND);
  auto m1 = parse_prometheus(http_body(port, "/metrics"));
  EXPECT_EQ(sum_of(m1, "berth_containers_running"), 1);
  EXPECT_EQ(sum_of(m1, "berth_rpc_requests_total", {"method=\"CreateContainer\"", "code=\"OK\""}), 1);
  EXPECT_EQ(sum_of(m1, "berth_rpc_requests_total", {"method=\"StartContainer\"", "code=\"OK\""}), 1);
  EXPECT_EQ(sum_of(m1, "berth_rpc_requests_total", {"method=\"ContainerStats\"", "code=\"NOT_FOUND\""}), 1);
  EXPECT_EQ(sum_of(m1, "berth_rpc_duration_seconds_count", {"method=\"StartContainer\"", "code=\"OK\""}), 1);
  EXPECT_EQ(sum_of(m1, "berth_rpc_duration_seconds_count", {"method=\"ContainerStats\"", "code=\"NOT_FOUND\""}), 1);

  // A second pod: one more sandbox start, more CNI execs; then the container stops.
  auto pod2_config = test_pod("pod2");
  std::string pod2;
  ASSERT_OK(cri.run_pod(pod2_config, &pod2));
  ASSERT_OK(cri.stop_container(id, 0));
  auto m2 = parse_prometheus(http_body(port, "/metrics"));
  EXPECT_EQ(sum_of(m2, "berth_sandbox_start_duration_seconds_count", {"result=\"ok\""}), 2);
  EXPECT_GT(sum_of(m2, "berth_cni_plugin_duration_seconds_count", {"command=\"ADD\""}),
            sum_of(m0, "berth_cni_plugin_duration_seconds_count", {"command=\"ADD\""}));
  EXPECT_EQ(sum_of(m2, "berth_sandboxes_ready"), 2);
  EXPECT_EQ(sum_of(m2, "berth_containers_running"), 0);
  ASSERT_OK(cri.stop_pod(pod2));
  auto m3 = parse_prometheus(http_body(port, "/metrics"));
  EXPECT_EQ(sum_of(m3, "berth_sandboxes_ready"), 1);
  EXPECT_GT(sum_of(m3, "berth_cni_plugin_duration_seconds_count", {"command=\"DEL\""}), 0);
}

}  // namespace
}  // namespace berth::test
