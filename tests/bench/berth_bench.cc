// berth-bench: a CRI client benchmark. It speaks only CRI v1 through the generated stubs, so the
// same program measures berth, containerd or CRI-O: berth-bench --endpoint unix:///run/x.sock.
// It prints figures and asserts nothing; each measurement lives in its own file.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "bench_figures.h"
#include "berth/cri_api.h"
#include "container_bench.h"
#include "density_bench.h"
#include "checkpoint_bench.h"
#include "lifecycle_bench.h"
#include "pull_bench.h"
#include "runtime_procs.h"
#include "sandbox_bench.h"
#include "stream_rpc_bench.h"
#include "stats_bench.h"
#include "recovery_bench.h"
#include "steady_state_bench.h"

namespace v1 = runtime::v1;
using namespace berth::bench;

int main(int argc, char** argv) {
  CLI::App app{"berth-bench: CRI v1 runtime benchmark"};
  std::string endpoint = "unix:///run/berth/berth.sock";
  size_t calls = 1000;
  std::string pull_ref;
  size_t pull_runs = 5;
  std::vector<std::string> stored_refs;
  int runtime_pid = 0;
  bool sandboxes = false, host_network = false;
  std::string metrics_url, container_image, streaming_image, stats_image;
  uint64_t streaming_mib = 256;
  size_t stats_calls = 50;
  std::string pod_image;
  bool lifecycle = false, steady = false, density = false;
  LifecycleBenchOptions lifecycle_o;
  CheckpointBenchOptions checkpoint_o;
  SteadyStateOptions steady_o;
  DensityOptions density_o;
  RuntimeProcsOptions procs_o;
  app.add_option("--endpoint", endpoint, "CRI endpoint, e.g. unix:///run/berth/berth.sock");
  app.add_option("--calls", calls, "calls per round-trip measurement");
  app.add_option("--pull", pull_ref, "also measure PullImage of this image, cold store (removed before each run)");
  app.add_option("--pull-runs", pull_runs, "PullImage runs (the median is reported)");
  std::string retried_ref;
  size_t pull_attempts = 20;
  app.add_option("--pull-until-ok", retried_ref, "pull this image again after each failure until it is pulled");
  app.add_option("--pull-attempts", pull_attempts, "--pull-until-ok gives up after this many attempts");
  app.add_option(
      "--pull-stored", stored_refs,
      "pull these images, then the first again (already stored) --pull-runs times; prints RSS after each step");
  app.add_option("--runtime-pid", runtime_pid, "the runtime daemon's pid, to report its RSS");
  app.add_flag("--sandboxes", sandboxes,
               "also measure RunPodSandbox (20 sequential, 10 parallel) and RSS with 30 sandboxes");
  app.add_flag("--host-network", host_network, "sandboxes on the host network (no netns, no CNI)");
  app.add_option("--metrics-url", metrics_url,
                 "berth's /metrics URL: report the share of RunPodSandbox spent in CNI plugins");
  app.add_option("--containers", container_image, "also measure containers running this image (pulled first)");
  app.add_option("--streaming", streaming_image,
                 "also measure Exec and PortForward through the streaming server (this image)");
  app.add_option("--streaming-mib", streaming_mib, "port-forward transfer size each way");
  app.add_option("--stats", stats_image,
                 "also measure ListContainerStats/ListPodSandboxStats with 100 containers running this image");
  app.add_option("--stats-calls", stats_calls, "calls per stats measurement (the median is reported)");
  int stats_pods = 10, stats_per_pod = 10;
  app.add_option("--stats-pods", stats_pods, "pods of the stats measurement");
  app.add_option("--stats-containers", stats_per_pod, "running containers per pod of the stats measurement");
  app.add_option("--pod-image", pod_image,
                 "the image --lifecycle, --steady-state and --density run (`sleep`, /bin/true)");
  app.add_flag("--lifecycle", lifecycle,
               "measure each rpc of a pod's life: Run, Create+Start, ExecSync, StopContainer, RemoveContainer, "
               "StopPodSandbox, RemovePodSandbox");
  app.add_option("--lifecycle-pods", lifecycle_o.pods, "pods --lifecycle makes, one after another");
  app.add_option("--checkpoint-dir", checkpoint_o.dir,
                 "checkpoint a container of --checkpoint-mib MiB of touched memory (the --pod-image) into "
                 "archives here and restore each (CheckpointContainer, CreateContainer + StartContainer)");
  app.add_option("--checkpoint-mib", checkpoint_o.mib, "memory the checkpointed container touches");
  app.add_option("--checkpoint-runs", checkpoint_o.runs, "checkpoints and restores --checkpoint-dir makes");
  app.add_option(
      "--lifecycle-userns", lifecycle_o.userns_host_base,
      "also make, in turn with --lifecycle's pods, as many with a user namespace of their own, host ids from this one");
  app.add_flag("--steady-state", steady,
               "replay kubelet's periodic calls on --steady-pods pods for --duration seconds");
  app.add_option("--steady-pods", steady_o.pods, "pods of the steady state");
  app.add_option("--duration", steady_o.seconds, "seconds of the steady state");
  app.add_flag("--keep-pods", steady_o.keep_pods, "leave --steady-state's pods running (for --wait-recovered)");
  size_t recovered_pods = 0;
  bool remove_all = false;
  app.add_option("--wait-recovered", recovered_pods,
                 "run right after the runtime's restart: time until it serves and lists this many pods ready and "
                 "containers running; nothing else is measured");
  app.add_flag("--remove-all", remove_all, "remove every pod the runtime lists (at --concurrency); nothing else");
  app.add_flag("--density", density, "start --density-pods pods at --concurrency, then list them");
  app.add_option("--density-pods", density_o.pods, "pods of the density measurement");
  app.add_option("--concurrency", steady_o.concurrency, "pod starts and removals in flight (steady state, density)");
  app.add_option("--helper-exe", procs_o.helper_exes,
                 "executable name of a runtime helper process counted with the daemon (containerd-shim-runc-v2, "
                 "berth-monitor); repeatable");
  app.add_option("--helper-marker", procs_o.helper_marker,
                 "a string in every helper's command line tying it to this daemon (its socket or work dir)");
  CLI11_PARSE(app, argc, argv);
  procs_o.daemon_pid = runtime_pid;
  density_o.concurrency = steady_o.concurrency;
  std::string target = endpoint;
  if (target.rfind("unix://", 0) == 0) target = "unix:" + target.substr(7);
  if (recovered_pods > 0) return wait_recovered(target, recovered_pods, 900) ? 0 : 1;

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5))) {
    std::fprintf(stderr, "berth-bench: cannot connect to %s\n", endpoint.c_str());
    return 1;
  }
  auto rt = v1::RuntimeService::NewStub(channel);
  if (remove_all) {
    remove_all_pods(*rt, steady_o.concurrency);
    return 0;
  }
  v1::VersionResponse version;
  {
    grpc::ClientContext ctx;
    if (!rt->Version(&ctx, v1::VersionRequest(), &version).ok()) {
      std::fprintf(stderr, "berth-bench: Version failed on %s\n", endpoint.c_str());
      return 1;
    }
  }
  std::printf("runtime: %s %s (CRI %s) at %s\n\n", version.runtime_name().c_str(), version.runtime_version().c_str(),
              version.runtime_api_version().c_str(), endpoint.c_str());
  print_header();
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
  if (sandboxes) run_sandbox_bench(*rt, {runtime_pid, host_network, metrics_url});
  auto images = v1::ImageService::NewStub(channel);
  if (!container_image.empty()) run_container_bench(*rt, *images, {container_image, runtime_pid});
  if (!streaming_image.empty()) run_stream_rpc_bench(*rt, *images, streaming_image, streaming_mib);
  if (!stats_image.empty())
    run_stats_bench(*rt, *images, {stats_image, runtime_pid, stats_calls, stats_pods, stats_per_pod});
  if (!pull_ref.empty()) run_pull_bench(*images, pull_ref, pull_runs, runtime_pid);
  if (!retried_ref.empty()) run_pull_until_ok(*images, retried_ref, pull_attempts);
  if (!stored_refs.empty()) run_stored_pull_bench(*images, stored_refs, pull_runs, runtime_pid);
  RuntimeProcs procs(procs_o);
  lifecycle_o.image = steady_o.image = density_o.image = pod_image;
  if (lifecycle) run_lifecycle_bench(*rt, *images, procs, lifecycle_o);
  if (steady) run_steady_state_bench(*rt, *images, procs, steady_o);
  if (density) run_density_bench(*rt, *images, procs, density_o);
  checkpoint_o.image = pod_image;
  if (!checkpoint_o.dir.empty()) run_checkpoint_bench(*rt, *images, checkpoint_o);
  return 0;
}
