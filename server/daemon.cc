// berthd's life: lock the state and root directories, take the socket, serve, and on
// SIGTERM/SIGINT stop accepting, give in-flight calls a bounded time, remove the socket; SIGHUP
// reloads the configuration (config_reload.h). run_daemon only constructs and connects, in order;
// each piece with logic of its own is a named function or class of server/ (signal_loop.h,
// grpc_listener.h, runtime_handlers_config.h, recovery_worker.h, state_lock.h).
#include "berth/daemon.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "berth/cdi.h"
#include "berth/metrics_endpoint.h"
#include "config_reload.h"
#include "container_hooks.h"
#include "daemon_options.h"
#include "grpc_listener.h"
#include "lifecycle_events.h"
#include "recovery_worker.h"
#include "rpc_metrics.h"
#include "runtime_handlers_config.h"
#include "sandbox_hooks.h"
#include "sd_notify.h"
#include "services.h"
#include "berth/config.h"
#include "berth/container_manager.h"
#include "berth/event_hub.h"
#include "berth/image_manager.h"
#include "berth/cni_manager.h"
#include "berth/sandbox_manager.h"
#include "berth/metrics_registry.h"
#include "berth/runtime_probe.h"
#include "berth/stats_collector.h"
#include "berth/streaming_server.h"
#include "berth/otlp_exporter.h"
#include "berth/tracer.h"
#include "call_limits.h"
#include "nri_bridge.h"
#include "pinned_images.h"
#include "memory_headroom.h"
#include "signal_loop.h"
#include "socket_path.h"
#include "state_lock.h"
#include "runtime_streaming_backend.h"

namespace berth {

namespace {

// SIGHUP reloads; SIGTERM and SIGINT drain the rpcs in flight, within the shutdown timeout.
SignalLoop::Handlers daemon_signal_handlers(const Config& config, ConfigReloader& reloader,
                                            EventHub<v1::ContainerEventResponse>& container_events,
                                            grpc::Server& server) {
  return {
      .reload =
          [&reloader] {
            spdlog::info("berthd: SIGHUP received, reloading the configuration");
            (void)reloader.reload();  // a refused configuration is logged by reload()
          },
      .stop =
          [&config, &container_events, &server](int sig) {
            (void)notify_service_manager("STOPPING=1");
            spdlog::info("berthd: {} received, draining (at most {}s)", strsignal(sig),
                         config.shutdown_timeout_seconds);
            container_events.close();  // ends GetContainerEvents streams so the drain is not held up
            server.Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(config.shutdown_timeout_seconds));
          }};
}

}  // namespace

int run_daemon(const Config& config, std::function<Result<Config>()> reload_config) {
  auto started = std::chrono::steady_clock::now();
  // First, before any thread exists: every thread berthd starts inherits the blocked signals.
  block_stop_signals();
  auto dirs = claim_daemon_dirs(config.root, config.state);
  if (!dirs.ok()) {
    spdlog::critical("berthd: refusing to start: {}", dirs.status().message());
    return 1;
  }
  if (Status s = prepare_socket_path(config.socket); !s.ok()) {
    spdlog::critical("berthd: refusing to start: {}", s.message());
    return 1;
  }

  // Spans go to the exporter from here on; the sink is taken away before the exporter goes (it
  // sends what is queued on its way out).
  std::unique_ptr<OtlpExporter> span_exporter;
  if (!config.tracing_endpoint.empty()) {
    auto e = OtlpExporter::start(config.tracing_endpoint, "berth");
    if (!e.ok()) {
      spdlog::critical("config {}: key 'tracing_endpoint': {}", config_key_origin(config, "tracing_endpoint"),
                       e.status().message());
      return 2;
    }
    span_exporter = std::move(*e);
    spdlog::info("berthd: traced calls' spans go to {}", config.tracing_endpoint);
  }
  tracing::set_sink(span_exporter.get());
  struct TracingOff {
    ~TracingOff() { tracing::set_sink(nullptr); }
  } tracing_off;

  MetricsRegistry metrics;
  InstalledRpcMetrics installed_rpc_metrics(metrics);
  std::unique_ptr<MetricsEndpoint> metrics_endpoint;  // moved by a reload (config_reload.h)
  if (Status s = move_metrics_endpoint(metrics_endpoint, config.metrics_address, metrics); !s.ok()) {
    spdlog::critical("config {}: key 'metrics_address': {}", config.source, s.message());
    return 2;
  }

  // A subscriber more than this many events behind is dropped rather than buffered further.
  const size_t backlog = static_cast<size_t>(config.event_subscriber_backlog);
  EventHub<v1::ContainerEventResponse> container_events(backlog, [backlog](uint64_t id) {
    spdlog::warn("GetContainerEvents: dropped subscriber {}: it fell {} events behind", id, backlog);
  });

  const DaemonMetrics families = register_daemon_metrics(metrics);
  // Writable layers and the image store, measured in the background (stats and ImageFsInfo).
  DiskUsageCache disk_usage({.refresh_interval = std::chrono::seconds(config.disk_usage_refresh_seconds)});
  NodeCredentials node_credentials(node_credentials_options(config));
  auto signature_policy = signature_policy_from_config(config);
  if (!signature_policy.ok()) {
    spdlog::critical("config {}: key 'signature_policy': {}", config_key_origin(config, "signature_policy"),
                     signature_policy.status().message());
    return 2;
  }
  auto images = ImageManager::open(
      image_manager_options(config, families, disk_usage, node_credentials, std::move(*signature_policy)));
  if (!images.ok()) {
    spdlog::critical("berthd: {}", images.status().message());
    return 1;
  }

  // How far each running pull has come, read from the store when scraped.
  auto pull_series = [&im = **images](bool done) {
    std::vector<std::pair<LabelValues, double>> out;
    for (const auto& p : im.pulls_in_progress())
      out.push_back({{p.reference}, static_cast<double>(done ? p.done_bytes : p.total_bytes)});
    return out;
  };
  metrics.gauges("berth_image_pull_progress_bytes",
                 "Bytes of each running pull's blobs stored or streamed into their partial downloads so far.",
                 {"image"}, [pull_series] { return pull_series(true); });
  metrics.gauges("berth_image_pull_size_bytes", "Bytes of all the blobs of each running pull.", {"image"},
                 [pull_series] { return pull_series(false); });

  SandboxManagerOptions sandbox_options = sandbox_manager_options(config, probe_host(image_store_root(config)));
  log_runtime_handlers(sandbox_options.runtimes);
  CniManager cni(cni_options(config, families));
  CniSandboxNetwork sandbox_network(cni);
  SandboxImagePolicy sandbox_images(**images, config.sandbox_image);
  sandbox_options.network = &sandbox_network;
  sandbox_options.images = &sandbox_images;
  auto sandboxes = SandboxManager::open(sandbox_options);
  if (!sandboxes.ok()) {
    spdlog::critical("berthd: {}", sandboxes.status().message());
    return 1;
  }
  metrics.gauge("berth_sandboxes_ready", "Pod sandboxes whose pause is running.",
                [&s = **sandboxes] { return static_cast<double>(s.ready_count()); });

  // Events carry the statuses of both managers: connected once both exist, disconnected first.
  LifecycleEvents events(container_events);
  ManagedPods container_pods(**sandboxes);
  CdiRegistry cdi(config.cdi_spec_dirs);
  StoredImages container_images(**images);
  // NRI plugins adjust new containers' specs: the container manager has the bridge before the
  // plugins start (once both managers have recovered, so they are told what exists).
  NriBridge nri;
  ContainerManagerOptions container_options =
      container_manager_options(config, sandbox_options.runtimes, sandbox_options.systemd, container_images,
                                container_pods, events, cdi, families);
  container_options.adjust_spec = [&nri](const SandboxInfo& pod, const v1::ContainerConfig& c, const std::string& id,
                                         oci::Spec& spec) { return nri.adjust_spec(pod, c, id, spec); };
  auto containers = ContainerManager::open(std::move(container_options));
  if (!containers.ok()) {
    spdlog::critical("berthd: {}", containers.status().message());
    return 1;
  }
  if (Status s = nri.start(config, BERTH_VERSION, &cdi, **sandboxes, **containers); !s.ok()) {
    spdlog::critical("config {}: [nri]: {}", config_key_origin(config, "nri"), s.message());
    return 2;
  }
  // The plugins go before the managers their threads call into.
  struct StopNri {
    NriBridge& nri;
    ~StopNri() { nri.stop(); }
  } stop_nri{nri};
  adopt_orphaned_networks(cni, **sandboxes);
  std::vector<RuntimeLeftover> runtime_leftovers =
      find_runtime_leftovers(sandbox_options.runtimes, **sandboxes, **containers);
  std::vector<std::string> cgroup_leftovers =
      find_cgroup_leftovers(**sandboxes, **containers, sandbox_options.runtimes.systemd_cgroup());
  metrics.gauge("berth_containers_running", "Containers whose process is running.",
                [&c = **containers] { return static_cast<double>(c.running_count()); });

  StatsCollector stats(**containers, **sandboxes, disk_usage, sandbox_options.runtimes.systemd_cgroup(),
                       config.root + "/containers", std::chrono::seconds(config.stats_collection_period_seconds));

  RuntimeStreamingBackend streaming_backend(**containers, **sandboxes);
  auto streaming = StreamingServer::start({.address = config.streaming_address,
                                           .token_ttl = std::chrono::seconds(config.streaming_token_ttl_seconds),
                                           .idle_timeout = std::chrono::seconds(config.streaming_idle_timeout_seconds)},
                                          streaming_backend);
  if (!streaming.ok()) {
    spdlog::critical("config {}: key 'streaming_address': {}", config.source, streaming.status().message());
    return 2;
  }
  spdlog::info("berthd: streaming server on http://{}", (*streaming)->address());

  RuntimeProbe probe(sandbox_options.runtimes.find("")->binary);
  PinnedImages pinned_images(config.pinned_images);
  // Before the services: Status's verbose info shows the configuration in effect after reloads.
  ConfigReloader reloader(config, reload_config ? reload_config : [&config] { return Result<Config>(config); },
                          {.images = images->get(),
                           .cni = &cni,
                           .streaming = streaming->get(),
                           .runtimes = &sandbox_options.runtimes,
                           .runtime_probe = &probe,
                           .cdi = &cdi,
                           .containers = containers->get(),
                           .pinned_images = &pinned_images,
                           .metrics_address = [&](const std::string& address) {
                             return move_metrics_endpoint(metrics_endpoint, address, metrics);
                           }});
  CallLimits call_limits(config.max_concurrent_rpcs);
  std::unique_ptr<MemoryHeadroom> memory_headroom(MemoryHeadroom::of_this_process());
  memory_headroom->set_shed([&images] {
    if (size_t n = (*images)->end_idle_pull_helpers(); n > 0)
      spdlog::info("berthd: near its memory limit: ended {} idle berth-pull helpers", n);
  });
  if (auto m = memory_headroom->read())
    spdlog::info("berthd: its cgroup's memory limit is {} MiB; new work is refused within {} MiB of it", m->limit >> 20,
                 MemoryHeadroom::reserve_for(m->limit) >> 20);
  ServiceContext ctx{config,
                     [&reloader] { return reloader.running(); },
                     sandbox_options.runtimes,
                     probe,
                     metrics,
                     container_events,
                     events,
                     **images,
                     **sandboxes,
                     cni,
                     **containers,
                     stats,
                     **streaming,
                     families.pull_duration,
                     families.sandbox_start,
                     call_limits,
                     *memory_headroom,
                     pinned_images,
                     nri};
  events.connect(**sandboxes, **containers);
  struct DisconnectEvents {
    LifecycleEvents& events;
    ~DisconnectEvents() { events.disconnect(); }
  } disconnect_events{events};
  RuntimeServiceImpl runtime_service(ctx);
  ImageServiceImpl image_service(ctx);

  auto server = start_grpc_listener({.socket = config.socket,
                                     .max_concurrent_rpcs = config.max_concurrent_rpcs,
                                     .services = {&runtime_service, &image_service}});
  if (!server.ok()) {
    spdlog::critical("berthd: {}", server.status().message());
    return 1;
  }
  // Undo what a crash left half made, now that berthd serves (runtime and CNI execs take time).
  RecoveryWorker recovery(**containers, **sandboxes, cni, **images, std::move(runtime_leftovers),
                          std::move(cgroup_leftovers), sandbox_options.runtimes.systemd_cgroup(),
                          sandbox_options.systemd.get());

  SignalLoop signals(daemon_signal_handlers(config, reloader, container_events, **server));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("berthd {} serving CRI v1 on {} (root {}, state {}, runtime {}) in {:.1f}ms", BERTH_VERSION,
               config.socket, config.root, config.state, config.default_runtime, ms);
  if (Status s = notify_service_manager("READY=1\nSTATUS=serving CRI v1 on " + config.socket); !s.ok())
    spdlog::warn("berthd: telling systemd it is ready: {}", s.message());
  (*server)->Wait();
  if (unlink(config.socket.c_str()) != 0 && errno != ENOENT)
    spdlog::warn("berthd: remove {}: {}", config.socket, strerror(errno));
  spdlog::info("berthd: stopped");
  return 0;
}

}  // namespace berth
