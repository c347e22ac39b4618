// See daemon_options.h.
#include "daemon_options.h"

#include <sys/resource.h>
#include <linux/capability.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

#include <spdlog/spdlog.h>

#include "berth/criu_support.h"
#include "berth/own_privileges.h"
#include "berth/systemd_units.h"

namespace berth {

DaemonMetrics register_daemon_metrics(MetricsRegistry& metrics) {
  return {
      .pull_bytes =
          metrics.counter("berth_image_pull_bytes_total", "Bytes received from registries by image pulls.", {}),
      .pull_duration = metrics.histogram("berth_image_pull_duration_seconds", "PullImage durations, by result.",
                                         {"result"}, MetricsRegistry::latency_buckets()),
      .sandbox_start = metrics.histogram("berth_sandbox_start_duration_seconds", "RunPodSandbox durations, by result.",
                                         {"result"}, MetricsRegistry::latency_buckets()),
      .cni_runs =
          metrics.histogram("berth_cni_plugin_duration_seconds", "CNI plugin execs, by plugin, command and outcome.",
                            {"plugin", "command", "result"}, MetricsRegistry::latency_buckets()),
      .cni_busy = metrics.counter("berth_cni_plugin_busy_retries_total",
                                  "CNI plugin execs retried because the binary was busy (ETXTBSY).", {"plugin"}),
      .log_bytes_lost = metrics.counter("berth_container_log_lost_bytes_total",
                                        "Bytes of containers' output their log files did not take (a full disk).", {}),
  };
}

// berth-pause, berth-monitor and berth-pull are installed beside berthd (packaging builds them all).
std::string helper_binary_path(const char* name) {
  char self[4096] = {};
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : "/usr/local/bin/berthd";
  return dir.substr(0, dir.rfind('/')) + "/" + name;
}

NodeCredentialsOptions node_credentials_options(const Config& config) {
  return {.auth_file = config.registry_auth_file,
          .helper_timeout = std::chrono::seconds(config.credential_helper_timeout_seconds),
          .helper_cache = std::chrono::seconds(config.credential_helper_cache_seconds)};
}

Result<std::shared_ptr<const SignaturePolicy>> signature_policy_from_config(const Config& config) {
  if (config.signature_policy_default == "insecureAcceptAnything" && config.signature_policy_scopes.empty())
    return std::shared_ptr<const SignaturePolicy>();
  auto rule = [](const std::string& type, const std::vector<std::string>& keys) {
    PolicyRule r{PolicyRule::Kind::signed_by, keys};
    if (type == "insecureAcceptAnything") r.kind = PolicyRule::Kind::accept_anything;
    if (type == "reject") r.kind = PolicyRule::Kind::reject;
    return r;
  };
  std::map<std::string, PolicyRule> scopes;
  for (const auto& [scope, s] : config.signature_policy_scopes) scopes[scope] = rule(s.type, s.keys);
  return SignaturePolicy::load(rule(config.signature_policy_default, {}), scopes);
}

ImageManagerOptions image_manager_options(const Config& config, const DaemonMetrics& metrics,
                                          DiskUsageCache& disk_usage, NodeCredentials& node_credentials,
                                          std::shared_ptr<const SignaturePolicy> signature_policy) {
  CounterFamily& pull_bytes = metrics.pull_bytes;
  return {.dir = image_store_root(config) + "/images",
          .containers_dir = config.root + "/containers",
          .registry = {.hosts = config.registries,
                       .idle_timeout_seconds = config.image_pull_idle_timeout_seconds,
                       .on_bytes = [&pull_bytes](size_t n) { pull_bytes.add({}, static_cast<double>(n)); }},
          .pull_helper = helper_binary_path("berth-pull"),
          .pull_helper_idle = std::chrono::seconds(config.image_pull_helper_idle_seconds),
          .max_parallel_layer_fetches = config.max_parallel_layer_fetches,
          .max_layers = config.max_image_layers,
          .pull_timeout = std::chrono::seconds(config.image_pull_timeout_seconds),
          .keep_for_retry = std::chrono::seconds(config.image_pull_keep_for_retry_seconds),
          .keep_for_retry_bytes = static_cast<uint64_t>(config.image_pull_keep_for_retry_mib) << 20,
          .progress_log_interval = std::chrono::seconds(config.image_pull_progress_log_seconds),
          .usage_cache = &disk_usage,
          .node_credentials = &node_credentials,
          .signature_policy = std::move(signature_policy)};
}

CniOptions cni_options(const Config& config, const DaemonMetrics& metrics) {
  HistogramFamily& runs = metrics.cni_runs;
  CounterFamily& busy = metrics.cni_busy;
  return {.conf_dir = config.cni_conf_dir,
          .plugin_dirs = config.cni_plugin_dirs,
          .cache_dir = config.root + "/cni",
          .exec_timeout = std::chrono::seconds(config.cni_plugin_timeout_seconds),
          .on_plugin_run =
              [&runs](const std::string& plugin, const std::string& command, double s, bool ok) {
                runs.observe({plugin, command, ok ? "ok" : "error"}, s);
              },
          .on_busy_retry = [&busy](const std::string& plugin) { busy.add({plugin}); }};
}

SandboxManagerOptions sandbox_manager_options(const Config& config, const HostProbe& host) {
  return {.state_dir = config.state,
          .root_dir = config.root,
          .pause_binary = helper_binary_path("berth-pause"),
          .pause_launcher = helper_binary_path("berth-pause-launch"),
          .runtimes = runtime_handlers_from_config(config, host.features),
          .systemd = config.cgroup_driver == "systemd" ? std::make_shared<SystemdUnits>() : nullptr,
          .user_namespaces = host.user_namespaces};
}

ContainerProcessDefaults container_process_defaults(const Config& config) {
  ContainerProcessDefaults out{.device_ownership_from_security_context = config.device_ownership_from_security_context};
  static const std::map<std::string, int> resources{
      {"as", RLIMIT_AS},           {"core", RLIMIT_CORE},         {"cpu", RLIMIT_CPU},
      {"data", RLIMIT_DATA},       {"fsize", RLIMIT_FSIZE},       {"locks", RLIMIT_LOCKS},
      {"memlock", RLIMIT_MEMLOCK}, {"msgqueue", RLIMIT_MSGQUEUE}, {"nice", RLIMIT_NICE},
      {"nofile", RLIMIT_NOFILE},   {"nproc", RLIMIT_NPROC},       {"rss", RLIMIT_RSS},
      {"rtprio", RLIMIT_RTPRIO},   {"rttime", RLIMIT_RTTIME},     {"sigpending", RLIMIT_SIGPENDING},
      {"stack", RLIMIT_STACK}};
  // Without CAP_SYS_RESOURCE (some nested or sandboxed hosts) the runtime cannot raise a hard
  // limit above berthd's own, and every container would fail to start: such a limit is lowered
  // to berthd's, and said so.
  const bool may_raise = own_privileges().effective_has(CAP_SYS_RESOURCE);
  auto value = [](int64_t v) { return v < 0 ? uint64_t{RLIM_INFINITY} : static_cast<uint64_t>(v); };
  for (const auto& [name, u] : config.default_ulimits) {
    uint64_t soft = value(u.soft), hard = value(u.hard);
    rlimit own{};
    if (auto it = resources.find(name);
        !may_raise && it != resources.end() && ::getrlimit(it->second, &own) == 0 && hard > own.rlim_max) {
      spdlog::warn(
          "config: key default_ulimits.{}: hard limit {} is above berthd's own ({}) and berthd lacks "
          "CAP_SYS_RESOURCE to raise it; containers get {}",
          name, u.hard, own.rlim_max, own.rlim_max);
      hard = own.rlim_max;
      soft = std::min(soft, hard);
    }
    std::string type = "RLIMIT_";
    for (char ch : name) type += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out.rlimits.push_back({.type = type, .hard = hard, .soft = soft});
  }
  return out;
}

ContainerManagerOptions container_manager_options(const Config& config, const RuntimeHandlers& runtimes,
                                                  std::shared_ptr<SystemdUnits> systemd, ContainerImages& images,
                                                  ContainerPods& pods, ContainerEventSink& events, CdiRegistry& cdi,
                                                  const DaemonMetrics& metrics) {
  return {.state_dir = config.state,
          .root_dir = config.root,
          .monitor_binary = helper_binary_path("berth-monitor"),
          .exec_helper = helper_binary_path("berth-exec"),
          .runtimes = runtimes,
          .systemd = systemd,
          .images = &images,
          .pods = &pods,
          .events = &events,
          .cdi = &cdi,
          .on_log_bytes_lost = [&lost = metrics.log_bytes_lost](uint64_t n) { lost.add({}, static_cast<double>(n)); },
          .process_defaults = container_process_defaults(config),
          .criu = config.criu_path.empty() ? nullptr : CriuSupport::probe(config.criu_path),
          .checkpoint_archive_helper = helper_binary_path("berth-checkpoint-archive")};
}

}  // namespace berth
