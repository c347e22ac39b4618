// RunPodSandbox, StopPodSandbox and RemovePodSandbox figures; see sandbox_bench.h. Every pod it
// makes is removed at the end.
#include "sandbox_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_figures.h"
#include "bench_pods.h"

namespace berth::bench {

namespace v1 = runtime::v1;
using Clock = std::chrono::steady_clock;

static v1::PodSandboxConfig bench_pod(const std::string& name, bool host_network) {
  v1::PodSandboxConfig c;
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_namespace_("berth-bench");
  c.mutable_metadata()->set_uid("bench-" + name);
  c.set_hostname(name);
  c.mutable_linux()->set_cgroup_parent("/berth-bench");
  if (host_network) c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(v1::NODE);
  return c;
}

static int sandbox_pid(v1::RuntimeService::Stub& rt, const std::string& id) {
  grpc::ClientContext ctx;
  v1::PodSandboxStatusRequest req;
  req.set_pod_sandbox_id(id);
  req.set_verbose(true);
  v1::PodSandboxStatusResponse st;
  if (!rt.PodSandboxStatus(&ctx, req, &st).ok() || !st.info().count("info")) return 0;
  auto at = st.info().at("info").find("\"pid\":");
  return at == std::string::npos ? 0 : std::atoi(st.info().at("info").c_str() + at + 6);
}

void run_sandbox_bench(v1::RuntimeService::Stub& rt, const SandboxBenchOptions& o) {
  std::vector<std::string> ids;
  std::mutex ids_mu;
  std::string last_error;
  auto run_pod = [&](const std::string& name) {
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = bench_pod(name, o.host_network);
    v1::RunPodSandboxResponse r;
    grpc::Status s = rt.RunPodSandbox(&ctx, req, &r);
    std::lock_guard lock(ids_mu);
    if (s.ok())
      ids.push_back(r.pod_sandbox_id());
    else
      last_error = s.error_message();
    return s.ok();
  };
  const char* kind = o.host_network ? "host network" : "pod network";
  long idle_kib = o.runtime_pid > 0 ? rss_kib(o.runtime_pid) : -1;
  std::string before = o.metrics_url.empty() ? "" : http_get(o.metrics_url);
  int n = 0;
  Figures seq = measure(20, [&] { return run_pod("seq-" + std::to_string(n++)); });
  std::string after = o.metrics_url.empty() ? "" : http_get(o.metrics_url);
  auto t0 = Clock::now();
  std::vector<std::thread> par;
  std::atomic<size_t> par_fail{0};
  for (int i = 0; i < 10; ++i)
    par.emplace_back([&, i] {
      if (!run_pod("par-" + std::to_string(i))) ++par_fail;
    });
  for (auto& t : par) t.join();
  double par_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  row(std::string("RunPodSandbox, ") + kind + ", sequential", seq);
  std::printf("| %-40s | %6d | %9.1f | %9s | %9s | %9s | %8zu |\n", "RunPodSandbox x10 parallel, wall", 10, par_ms, "",
              "", "", par_fail.load());
  while (ids.size() < 30 && run_pod("fill-" + std::to_string(ids.size()))) {
  }
  long with30 = o.runtime_pid > 0 ? rss_kib(o.runtime_pid) : -1;
  long helper_total = 0;
  int helpers = 0;
  for (const auto& id : ids) {
    long k = rss_kib(sandbox_pid(rt, id));
    if (k > 0) {
      helper_total += k;
      ++helpers;
    }
  }
  std::printf("\nRunPodSandbox (%s): p50 %.1f ms, p95 %.1f ms over 20 sequential; 10 in parallel: %.0f ms wall\n", kind,
              seq.p50_ms, seq.p95_ms, par_ms);
  if (!before.empty() && !after.empty()) {
    const char* m = "berth_cni_plugin_duration_seconds_sum";
    double add_s = metric_sum(after, m, "command=\"ADD\"") - metric_sum(before, m, "command=\"ADD\"");
    double per_pod_ms = add_s * 1000 / 20;
    std::printf(
        "CNI plugin execs (ADD, all plugins of the chain): %.1f ms per pod on average, %.0f%% of the mean "
        "RunPodSandbox\n",
        per_pod_ms, seq.mean_ms > 0 ? 100 * per_pod_ms / seq.mean_ms : 0);
  }
  if (o.runtime_pid > 0)
    std::printf("runtime RSS idle %.1f MiB, with %zu sandboxes %.1f MiB\n", idle_kib / 1024.0, ids.size(),
                with30 / 1024.0);
  if (helpers > 0)
    std::printf("per sandbox helper processes: one pause each, %.0f KiB RSS on average\n",
                static_cast<double>(helper_total) / helpers);
  if (!last_error.empty()) std::printf("last RunPodSandbox error: %s\n", last_error.c_str());
  // Stop, then remove, the first 20 pods one after another (each pod only its pause, as kubelet
  // leaves it after stopping its containers), while the others still run.
  std::vector<std::string> timed(ids.begin(), ids.begin() + std::min<size_t>(20, ids.size()));
  size_t next = 0;
  Figures stop = measure(timed.size(), [&] {
    grpc::ClientContext ctx;
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(timed[next++]);
    v1::StopPodSandboxResponse r;
    return rt.StopPodSandbox(&ctx, req, &r).ok();
  });
  next = 0;
  Figures remove = measure(timed.size(), [&] {
    grpc::ClientContext ctx;
    v1::RemovePodSandboxRequest req;
    req.set_pod_sandbox_id(timed[next++]);
    v1::RemovePodSandboxResponse r;
    return rt.RemovePodSandbox(&ctx, req, &r).ok();
  });
  row(std::string("StopPodSandbox, ") + kind, stop);
  row(std::string("RemovePodSandbox (stopped), ") + kind, remove);
  std::printf(
      "StopPodSandbox (%s): p50 %.1f ms, p95 %.1f ms; RemovePodSandbox of a stopped pod: p50 %.1f ms, p95 %.1f ms"
      " (%zu sequential each)\n",
      kind, stop.p50_ms, stop.p95_ms, remove.p50_ms, remove.p95_ms, timed.size());
  remove_pods(rt, ids);
}

}  // namespace berth::bench
