// What run_daemon opens each part of berthd with, from the configuration: the options of the image,
// sandbox, container and CNI managers, and berthd's own metric families, registered once.
#pragma once

#include <string>

#include "berth/cdi.h"
#include "berth/cni_manager.h"
#include "berth/config.h"
#include "berth/container_manager.h"
#include "berth/disk_usage_cache.h"
#include "berth/image_manager.h"
#include "berth/metrics_registry.h"
#include "berth/sandbox_manager.h"
#include "runtime_handlers_config.h"

namespace berth {

// The families the daemon's parts count into (rpc metrics are installed apart, rpc_metrics.h).
struct DaemonMetrics {
  CounterFamily& pull_bytes;
  HistogramFamily& pull_duration;
  HistogramFamily& sandbox_start;
  HistogramFamily& cni_runs;
  CounterFamily& cni_busy;
  CounterFamily& log_bytes_lost;
};
DaemonMetrics register_daemon_metrics(MetricsRegistry& metrics);

// A helper program installed beside berthd.
std::string helper_binary_path(const char* name);

ImageManagerOptions image_manager_options(const Config& config, const DaemonMetrics& metrics,
                                          DiskUsageCache& disk_usage, NodeCredentials& node_credentials,
                                          std::shared_ptr<const SignaturePolicy> signature_policy);
NodeCredentialsOptions node_credentials_options(const Config& config);
// null when every image is accepted (the default); an error names the scope and the key file.
Result<std::shared_ptr<const SignaturePolicy>> signature_policy_from_config(const Config& config);
CniOptions cni_options(const Config& config, const DaemonMetrics& metrics);
// Without the network and image hooks, which run_daemon sets once it has made them.
SandboxManagerOptions sandbox_manager_options(const Config& config, const HostProbe& host);
// default_ulimits (as the OCI spec takes them: RLIMIT_<NAME>, unlimited as RLIM_INFINITY) and
// device_ownership_from_security_context.
ContainerProcessDefaults container_process_defaults(const Config& config);

ContainerManagerOptions container_manager_options(const Config& config, const RuntimeHandlers& runtimes,
                                                  std::shared_ptr<SystemdUnits> systemd, ContainerImages& images,
                                                  ContainerPods& pods, ContainerEventSink& events, CdiRegistry& cdi,
                                                  const DaemonMetrics& metrics);

}  // namespace berth
