// hostile-bench: what misbehaving peers cost berthd. Prints figures, asserts nothing. For each
// peer, berthd's RSS and thread count before, at their peak while the peer runs (sampled every
// 10 ms) and after it has gone:
//  1. a registry trickling a byte every 2 s, 40 pulls whose clients give up after 10 s;
//  2. a 60 000-layer manifest (9 MB) and a 512 MiB "manifest";
//  3. a flood of 100 PullImage calls stalled on the trickling registry, with Status polled every
//     20 ms meanwhile (p50, p99 and max of Status, and how many were answered);
//  4. exec sessions whose clients flood PINGs (SPDY) and pings (WebSocket) without reading, 10 s
//     each;
//  5. a container whose writable layer holds a 20 000-level directory tree: ContainerStats and
//     ListContainerStats latency (p50, max) while the tree exists, and the time to remove it.
// BERTHD=<path> runs another build's berthd (a before/after comparison in one program).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "berth/test/cri_client.h"
#include "berth/test/daemon_process.h"
#include "berth/test/helper_process.h"
#include "berth/test/hostile_peer.h"
#include "bench_pods.h"

using namespace berth::test;
namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

// berthd's RSS and threads: before, the peak while a peer runs, and after.
class Sampler {
 public:
  explicit Sampler(pid_t pid) : pid_(pid), rss0_(long(vm_rss_kib(pid))), thr0_(thread_count(pid)) {
    peak_rss_ = rss0_;
    peak_thr_ = thr0_;
    thread_ = std::thread([this] {
      while (!done_) {
        peak_rss_ = std::max(peak_rss_.load(), long(vm_rss_kib(pid_)));
        peak_thr_ = std::max(peak_thr_.load(), long(thread_count(pid_)));
        std::this_thread::sleep_for(10ms);
      }
    });
  }
  // Stops sampling; `after` is read once the peer has gone and `settle` has passed.
  void report(const char* what, std::chrono::milliseconds settle = 2000ms) {
    done_ = true;
    thread_.join();
    std::this_thread::sleep_for(settle);
    std::printf("  %-34s RSS %6.1f -> peak %6.1f -> after %6.1f MiB; threads %3ld -> peak %3ld -> after %3ld\n", what,
                double(rss0_) / 1024, double(peak_rss_) / 1024, double(long(vm_rss_kib(pid_))) / 1024, thr0_,
                peak_thr_.load(), long(thread_count(pid_)));
  }

 private:
  pid_t pid_;
  long rss0_, thr0_;
  std::atomic<long> peak_rss_, peak_thr_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

grpc::Status pull(DaemonProcess& d, const std::string& ref, std::chrono::milliseconds deadline) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::PullImageRequest req;
  req.mutable_image()->set_image(ref);
  v1::PullImageResponse resp;
  return d.images()->PullImage(&ctx, req, &resp);
}

void trickling_registry(DaemonProcess& d) {
  HostileRegistryProcess reg({"--trickle", "2"});
  Sampler s(d.pid());
  std::vector<std::future<grpc::Status>> pulls;
  for (int i = 0; i < 40; ++i)
    pulls.push_back(std::async(std::launch::async, [&, i] { return pull(d, reg.ref("t" + std::to_string(i)), 10s); }));
  int refused = 0;
  for (auto& p : pulls) refused += !p.get().ok();
  char what[64];
  std::snprintf(what, sizeof what, "trickling registry (%d/40 ended)", refused);
  s.report(what);
}

void oversized_manifests(DaemonProcess& d) {
  for (const std::vector<std::string>& mode : {std::vector<std::string>{"--layers", "60000"}, {"--huge", "512"}}) {
    HostileRegistryProcess reg(mode);
    Sampler s(d.pid());
    grpc::Status st = pull(d, reg.ref("huge"), 120s);
    std::string what = (mode[0] == "--layers" ? "60 000-layer manifest: " : "512 MiB manifest: ") +
                       std::to_string(int(st.error_code()));
    s.report(what.c_str());
  }
}

void stalled_pull_flood(DaemonProcess& d) {
  HostileRegistryProcess reg({"--trickle", "5"});
  Sampler s(d.pid());
  std::vector<std::future<grpc::Status>> pulls;
  for (int i = 0; i < 100; ++i)
    pulls.push_back(std::async(std::launch::async, [&, i] { return pull(d, reg.ref("f" + std::to_string(i)), 15s); }));
  std::this_thread::sleep_for(500ms);
  auto rt = d.runtime();
  std::vector<double> lat;
  int answered = 0, asked = 0;
  auto end = Clock::now() + 10s;
  while (Clock::now() < end) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::StatusResponse resp;
    auto t = Clock::now();
    ++asked;
    if (rt->Status(&ctx, v1::StatusRequest(), &resp).ok()) {
      ++answered;
      lat.push_back(ms_since(t));
    }
    std::this_thread::sleep_for(20ms);
  }
  int refused = 0;
  for (auto& p : pulls) refused += p.get().error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  s.report("100 stalled pulls");
  std::printf(
      "  Status during the flood: %d of %d answered, p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d pulls refused "
      "RESOURCE_EXHAUSTED\n",
      answered, asked, quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 1.0), refused);
}

std::string exec_url(CriClient& cri, const std::string& id, bool tty) {
  grpc::ClientContext ctx;
  v1::ExecRequest req;
  req.set_container_id(id);
  for (const char* a : {"sleep", "2000"}) req.add_cmd(a);
  req.set_tty(tty);
  req.set_stdin(true);
  req.set_stdout(true);
  req.set_stderr(!tty);
  v1::ExecResponse resp;
  grpc::Status s = cri.runtime().Exec(&ctx, req, &resp);
  return s.ok() ? resp.url() : "";
}

void ping_floods(DaemonProcess& d, CriClient& cri, const std::string& id) {
  for (bool websocket : {false, true}) {
    Sampler s(d.pid());
    uint64_t sent = 0;
    int sessions = 0, cut = 0;
    auto end = Clock::now() + 10s;
    while (Clock::now() < end) {
      std::string url = exec_url(cri, id, false);
      auto peer =
          websocket ? HostilePeer::websocket(url, "v5.channel.k8s.io") : HostilePeer::spdy(url, "v4.channel.k8s.io");
      if (!peer.ok()) break;
      if (!websocket && !(*peer)->open_command_streams(true, true, true).ok()) break;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      auto f = (*peer)->flood(websocket ? HostilePeer::ws_frame(0x9, std::string(125, 'p')) : HostilePeer::spdy_ping(1),
                              uint64_t(64) << 30, std::max(left, 1000ms));
      sent += f.sent;
      ++sessions;
      cut += f.cut_off;
    }
    char what[96];
    std::snprintf(what, sizeof what, "%s ping flood (%d sessions, %d cut)", websocket ? "WebSocket" : "SPDY", sessions,
                  cut);
    s.report(what);
    std::printf("  %-34s %.0f MiB sent by the clients, %.1f MiB per session before the cut\n", "",
                double(sent) / (1 << 20), sessions ? double(sent) / (1 << 20) / sessions : 0.0);
  }
}

void deep_tree(DaemonProcess& d, CriClient& cri, const std::string& pod, const v1::PodSandboxConfig& config,
               const std::string& image) {
  std::string id;
  if (!cri.create_container(pod, berth::bench::sleeper_config("deep", image), &id, config).ok() ||
      !cri.start_container(id).ok()) {
    std::printf("  deep tree: container did not start\n");
    return;
  }
  std::string top = d.root() + "/containers/" + id + "/upper";
  ::mkdir((top + "/chain").c_str(), 0755);
  for (int i = 0; i < 20000; ++i) {
    ::mkdir((top + "/up").c_str(), 0755);
    ::rename((top + "/chain").c_str(), (top + "/up/d").c_str());
    ::rename((top + "/up").c_str(), (top + "/chain").c_str());
  }
  Sampler s(d.pid());
  std::vector<double> one, all;
  uint64_t inodes = 0;
  auto end = Clock::now() + 15s;
  while (Clock::now() < end) {
    grpc::ClientContext c1, c2;
    v1::ContainerStatsRequest req;
    req.set_container_id(id);
    v1::ContainerStatsResponse resp;
    auto t = Clock::now();
    if (cri.runtime().ContainerStats(&c1, req, &resp).ok()) one.push_back(ms_since(t));
    inodes = std::max<uint64_t>(inodes, resp.stats().writable_layer().inodes_used().value());
    v1::ListContainerStatsResponse lresp;
    t = Clock::now();
    if (cri.runtime().ListContainerStats(&c2, v1::ListContainerStatsRequest(), &lresp).ok()) all.push_back(ms_since(t));
    std::this_thread::sleep_for(100ms);
  }
  s.report("20 000-level tree, stats polled", 0ms);
  std::printf(
      "  ContainerStats p50 %.2f ms, max %.2f ms; ListContainerStats p50 %.2f ms, max %.2f ms; inodes seen %llu\n",
      quantile(one, 0.5), quantile(one, 1.0), quantile(all, 0.5), quantile(all, 1.0), (unsigned long long)inodes);
  auto t = Clock::now();
  bool stopped = cri.stop_container(id, 0).ok();
  grpc::Status removed = cri.remove_container(id);
  std::printf("  stop + RemoveContainer: %s in %.0f ms%s%s\n", stopped && removed.ok() ? "ok" : "FAILED", ms_since(t),
              removed.ok() ? "" : ": ", removed.error_message().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hostile-bench: berthd's RSS and threads under misbehaving peers"};
  bool skip_pods = false;
  app.add_flag("--no-pods", skip_pods, "only the registry peers (1-3)");
  CLI11_PARSE(app, argc, argv);
  std::printf("hostile-bench: berthd %s\n", berthd_path().c_str());

  RegistryProcess registry;
  push_test_images(registry.url(), {"--only", "busybox"});
  std::string image = registry.host() + "/test/busybox:latest";
  DaemonProcess d({.config_toml = "disk_usage_refresh_seconds = 1\n"});
  if (!d.start()) {
    std::fprintf(stderr, "hostile-bench: berthd did not start: %s\n", d.log().c_str());
    return 1;
  }
  CriClient cri(d);
  if (!cri.pull_image(image).ok()) {
    std::fprintf(stderr, "hostile-bench: pull %s failed\n", image.c_str());
    return 1;
  }
  std::printf("idle after one pull: RSS %.1f MiB, threads %ld\n", double(long(vm_rss_kib(d.pid()))) / 1024,
              long(thread_count(d.pid())));
  trickling_registry(d);
  oversized_manifests(d);
  stalled_pull_flood(d);
  if (!skip_pods) {
    v1::PodSandboxConfig config = test_pod("hostile");
    std::string pod, id;
    if (cri.run_pod(config, &pod).ok() &&
        cri.create_container(pod, berth::bench::sleeper_config("c", image), &id, config).ok() &&
        cri.start_container(id).ok()) {
      ping_floods(d, cri, id);
      deep_tree(d, cri, pod, config, image);
    } else {
      std::printf("  pod did not start\n");
    }
    if (!pod.empty()) {
      (void)cri.stop_pod(pod);
      (void)cri.remove_pod(pod);
    }
  }
  d.stop();
  return 0;
}
