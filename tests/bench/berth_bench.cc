// berth-bench: a CRI client benchmark. It speaks only CRI v1 through the generated stubs, so the
// same program measures berth, containerd or CRI-O: berth-bench --endpoint unix:///run/x.sock.
// Each measurement prints one table row; later issues add their measurements as new --only names.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "berth/cri_api.h"

namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;

namespace {

struct Figures {
  double p50_ms, p95_ms, p99_ms, mean_ms;
  size_t n, failures;
};

Figures measure(size_t n, const std::function<bool()>& call) {
  std::vector<double> ms;
  ms.reserve(n);
  size_t failures = 0;
  for (size_t i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    if (!call()) ++failures;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  auto pct = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))]; };
  return {pct(0.50), pct(0.95), pct(0.99), sum / ms.size(), n, failures};
}

// VmHWM (peak RSS) of a process in KiB; writing 5 to clear_refs resets it, so a peak can be
// measured over one stretch of work.
long peak_rss_kib(int pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  std::fclose(f);
  return kib;
}

void reset_peak_rss(int pid) {
  if (std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/clear_refs").c_str(), "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

long rss_kib(int pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  std::fclose(f);
  return kib;
}

v1::PodSandboxConfig bench_pod(const std::string& name) {
  v1::PodSandboxConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_namespace_("berth-bench");
  c.mutable_metadata()->set_uid("bench-" + name);
  c.set_hostname(name);
  c.mutable_linux()->set_cgroup_parent("/berth-bench");
  return c;
}

void row(const std::string& what, const Figures& f) {
  std::printf("| %-34s | %6zu | %9.3f | %9.3f | %9.3f | %8zu |\n", what.c_str(), f.n, f.p50_ms,
              f.p99_ms, f.mean_ms, f.failures);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"berth-bench: CRI v1 runtime benchmark"};
  std::string endpoint = "unix:///run/berth/berth.sock";
  size_t calls = 1000;
  std::string pull_ref;
  size_t pull_runs = 5;
  int runtime_pid = 0;
  bool sandboxes = false;
  app.add_option("--endpoint", endpoint, "CRI endpoint, e.g. unix:///run/berth/berth.sock");
  app.add_option("--calls", calls, "calls per round-trip measurement");
  app.add_option("--pull", pull_ref, "also measure PullImage of this image, cold store (removed before each run)");
  app.add_option("--pull-runs", pull_runs, "PullImage runs (the median is reported)");
  app.add_option("--runtime-pid", runtime_pid, "the runtime daemon's pid, to report its RSS");
  app.add_flag("--sandboxes", sandboxes, "also measure RunPodSandbox (20 sequential, 10 parallel) and RSS with 30 sandboxes");
  CLI11_PARSE(app, argc, argv);
  std::string target = endpoint;
  if (target.rfind("unix://", 0) == 0) target = "unix:" + target.substr(7);

  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5))) {
    std::fprintf(stderr, "berth-bench: cannot connect to %s\n", endpoint.c_str());
    return 1;
  }
  auto rt = v1::RuntimeService::NewStub(channel);
  v1::VersionResponse version;
  {
    grpc::ClientContext ctx;
    if (!rt->Version(&ctx, v1::VersionRequest(), &version).ok()) {
      std::fprintf(stderr, "berth-bench: Version failed on %s\n", endpoint.c_str());
      return 1;
    }
  }
  std::printf("runtime: %s %s (CRI %s) at %s\n\n", version.runtime_name().c_str(),
              version.runtime_version().c_str(), version.runtime_api_version().c_str(), endpoint.c_str());
  std::printf("| %-34s | %6s | %9s | %9s | %9s | %8s |\n", "measurement", "calls", "p50 ms", "p99 ms",
              "mean ms", "failures");
  std::printf("|------------------------------------|--------|-----------|-----------|-----------|----------|\n");

  row("Version round trip (1 connection)", measure(calls, [&] {
        grpc::ClientContext ctx;
        v1::VersionResponse r;
        return rt->Version(&ctx, v1::VersionRequest(), &r).ok();
      }));
  row("Status round trip (1 connection)", measure(calls, [&] {
        grpc::ClientContext ctx;
        v1::StatusResponse r;
        return rt->Status(&ctx, v1::StatusRequest(), &r).ok();
      }));
  if (sandboxes) {
    std::vector<std::string> ids;
    std::mutex ids_mu;
    auto run_pod = [&](const std::string& name) {
      grpc::ClientContext ctx;
      v1::RunPodSandboxRequest req;
      *req.mutable_config() = bench_pod(name);
      v1::RunPodSandboxResponse r;
      bool ok = rt->RunPodSandbox(&ctx, req, &r).ok();
      if (ok) {
        std::lock_guard lock(ids_mu);
        ids.push_back(r.pod_sandbox_id());
      }
      return ok;
    };
    long idle_kib = runtime_pid > 0 ? rss_kib(runtime_pid) : -1;
    int n = 0;
    Figures seq = measure(20, [&] { return run_pod("seq-" + std::to_string(n++)); });
    auto t0 = Clock::now();
    std::vector<std::thread> par;
    std::atomic<size_t> par_fail{0};
    for (int i = 0; i < 10; ++i)
      par.emplace_back([&, i] { if (!run_pod("par-" + std::to_string(i))) ++par_fail; });
    for (auto& t : par) t.join();
    double par_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    row("RunPodSandbox, sequential (p50/p99)", seq);
    std::printf("| %-34s | %6d | %9.1f | %9s | %9s | %8zu |\n", "RunPodSandbox x10 parallel, wall", 10, par_ms, "", "", par_fail.load());
    while (ids.size() < 30 && run_pod("fill-" + std::to_string(ids.size()))) {
    }
    long with30 = runtime_pid > 0 ? rss_kib(runtime_pid) : -1;
    long pause_total = 0;
    int pause_count = 0;
    for (const auto& id : ids) {
      grpc::ClientContext ctx;
      v1::PodSandboxStatusRequest req;
      req.set_pod_sandbox_id(id);
      req.set_verbose(true);
      v1::PodSandboxStatusResponse st;
      if (!rt->PodSandboxStatus(&ctx, req, &st).ok() || !st.info().count("info")) continue;
      auto at = st.info().at("info").find("\"pid\":");
      if (at == std::string::npos) continue;
      int pid = std::atoi(st.info().at("info").c_str() + at + 6);
      long k = rss_kib(pid);
      if (k > 0) {
        pause_total += k;
        ++pause_count;
      }
    }
    std::printf("\nRunPodSandbox (no CNI): p50 %.1f ms, p95 %.1f ms over 20 sequential; 10 in parallel: %.0f ms wall\n",
                seq.p50_ms, seq.p95_ms, par_ms);
    if (runtime_pid > 0)
      std::printf("runtime RSS idle %.1f MiB, with %zu sandboxes %.1f MiB\n", idle_kib / 1024.0, ids.size(), with30 / 1024.0);
    if (pause_count > 0)
      std::printf("per sandbox helper processes: one pause each, %.0f KiB RSS on average (no monitor process)\n",
                  static_cast<double>(pause_total) / pause_count);
    for (const auto& id : ids) {
      grpc::ClientContext ctx;
      v1::RemovePodSandboxRequest req;
      req.set_pod_sandbox_id(id);
      v1::RemovePodSandboxResponse r;
      rt->RemovePodSandbox(&ctx, req, &r);
    }
  }
  if (!pull_ref.empty()) {
    auto images = v1::ImageService::NewStub(channel);
    auto remove = [&] {
      grpc::ClientContext ctx;
      v1::RemoveImageRequest req;
      req.mutable_image()->set_image(pull_ref);
      v1::RemoveImageResponse r;
      images->RemoveImage(&ctx, req, &r);
    };
    long peak_kib = 0;
    std::string error;
    Figures f = measure(pull_runs, [&] {
      remove();
      if (runtime_pid > 0) reset_peak_rss(runtime_pid);
      grpc::ClientContext ctx;
      v1::PullImageRequest req;
      req.mutable_image()->set_image(pull_ref);
      v1::PullImageResponse r;
      grpc::Status s = images->PullImage(&ctx, req, &r);
      if (!s.ok()) error = s.error_message();
      if (runtime_pid > 0) peak_kib = std::max(peak_kib, peak_rss_kib(runtime_pid));
      return s.ok();
    });
    row("PullImage, cold store", f);
    long bytes = 0;
    {
      grpc::ClientContext ctx;
      v1::ImageStatusRequest req;
      req.mutable_image()->set_image(pull_ref);
      v1::ImageStatusResponse st;
      if (images->ImageStatus(&ctx, req, &st).ok()) bytes = static_cast<long>(st.image().size());
    }
    std::printf("\nPullImage %s: %.1f MiB compressed, median %.0f ms over %zu runs\n", pull_ref.c_str(),
                bytes / 1048576.0, f.p50_ms, f.n);
    if (runtime_pid > 0) std::printf("runtime peak RSS during a pull (VmHWM): %.1f MiB\n", peak_kib / 1024.0);
    if (!error.empty()) std::printf("last pull error: %s\n", error.c_str());
  }
  return 0;
}
