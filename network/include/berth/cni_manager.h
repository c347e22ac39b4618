// CniManager: pod networking through CNI plugins. It owns the pod network config (the lexically
// first valid file of the conf dir, hot-reloaded through inotify), runs the plugins' ADD / DEL /
// CHECK, and persists one result-cache entry per (network, sandbox, interface) under
// <cache_dir>/results so DEL always runs with the exact config ADD used, across config changes
// and berthd restarts. Callers serialize calls for one sandbox id; different sandboxes run in
// parallel (no lock is held across a plugin exec).
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/status.h"

namespace berth {

struct CniOptions {
  std::string conf_dir = "/etc/cni/net.d";
  std::vector<std::string> plugin_dirs{"/opt/cni/bin", "/usr/lib/cni"};
  std::string cache_dir;                          // required: <root>/cni; entries go to <cache_dir>/results
  std::chrono::milliseconds exec_timeout{30000};  // per plugin exec
  // How long an exec failing with ETXTBSY is retried (backoff 20ms doubling to 320ms).
  std::chrono::milliseconds busy_retry_budget{3000};
  bool watch_conf_dir = true;  // inotify thread; off: reload() by hand
  // Metrics hooks: every plugin run (type, command, seconds, ok) and every ETXTBSY retry.
  std::function<void(const std::string&, const std::string&, double, bool)> on_plugin_run;
  std::function<void(const std::string&)> on_busy_retry;
};

struct PortMapping {
  std::string protocol = "tcp";  // tcp, udp or sctp
  int container_port = 0;
  int host_port = 0;
  std::string host_ip;  // empty: all addresses
};

struct DnsSettings {
  std::vector<std::string> servers, searches, options;
};

struct PodNetworkRequest {
  std::string sandbox_id;  // CNI_CONTAINERID
  std::string pod_name, pod_namespace, pod_uid;
  std::string netns_path;  // the pinned netns, e.g. /run/berth/netns/<id>
  std::vector<PortMapping> port_mappings;
  DnsSettings dns;
  // The pod's annotations: all are offered as io.kubernetes.cri.pod-annotations, and
  // kubernetes.io/ingress-bandwidth / egress-bandwidth become the bandwidth capability.
  std::map<std::string, std::string> annotations;
  // When set, the caller is still making the netns: setup() records its cache entry meanwhile
  // and runs the first plugin only once this is OK. An error instead drops the entry (nothing
  // was ADDed) and is returned.
  std::shared_future<Status> netns_ready;
};

struct PodNetworkStatus {
  std::string network_name;
  std::vector<std::string> ips;  // without prefix length; IPv4 first, then IPv6 (PodIP order)
  std::string result_json;       // the last plugin's result, as the plugin printed it
};

struct NetworkReadiness {
  bool ready = false;
  std::string reason;   // "NetworkPluginNotReady" when not ready
  std::string message;  // what is missing, or what is in use
  std::string network_name, config_file;
};

class CniManager {
 public:
  // Loads the conf dir at once and (when asked) starts watching it. The conf dir is created
  // when missing so it can be watched; a failure to do so shows in readiness().
  explicit CniManager(CniOptions options);
  ~CniManager();
  CniManager(const CniManager&) = delete;
  CniManager& operator=(const CniManager&) = delete;

  // ADD on every plugin of the pod network. The cache entry is written (durably) before the first
  // plugin runs, so a DEL follows any crash; the final result is added to it without an fsync
  // (a crash of berthd keeps it in the page cache; a power cut takes the netns, the veth and the
  // pod with it, and DEL works from the config alone). On any failure after that (a plugin's, an unreadable final
  // result, a failed cache write) the plugins are DEL'd (reverse order) before returning, and the entry is dropped when
  // that DEL succeeded. Errors carry the plugin's CNI error JSON verbatim. Bad bandwidth
  // annotations are INVALID_ARGUMENT only when a plugin asks for the bandwidth capability.
  Result<PodNetworkStatus> setup(const PodNetworkRequest& request);

  // DEL with the cached config of sandbox_id (reverse order). netns_path may be empty, gone or
  // not (yet) a namespace (a pin file whose mount a crash cut short): the plugins then get an
  // empty CNI_NETNS and still release addresses. No cache entry: OK (nothing was set up, or it
  // was already torn down). The entry is removed only on success.
  // A corrupt entry is logged, DEL runs with the current network config instead (when there is
  // one), and the entry is removed: it never makes teardown fail for good.
  Status teardown(const std::string& sandbox_id, const std::string& netns_path);

  // Sandboxes whose network could not be released when they went (a RunPodSandbox whose rollback
  // DEL failed, or entries no sandbox owns at start) are DEL'd again: on every teardown() and by
  // retry_orphans(). adopt_orphans() makes every cache entry of a sandbox not in `live` (the ids
  // that exist) such an orphan; call it before any new sandbox can be made (at start), and run
  // the DELs later with retry_orphans(), so a start is not held up by plugin execs.
  void adopt_orphans(const std::vector<std::string>& live);
  void retry_orphans();

  // CHECK with the cached config and result (CNI >= 0.4.0 and not disableCheck; else OK).
  Status check(const std::string& sandbox_id, const std::string& netns_path);

  // The IPs recorded for a sandbox (from the cache: survives restarts); NOT_FOUND when none.
  Result<PodNetworkStatus> status(const std::string& sandbox_id) const;

  // Evaluated on every call: the network's plugins are looked up in the plugin dirs each time,
  // so installing or deleting a binary shows without any change to the conf dir.
  NetworkReadiness readiness() const;

  // Re-reads the conf dir now (the watcher calls this on every change).
  void reload();

  // Switches to another conf dir (watched from now on) and plugin dirs, and re-reads the conf dir
  // (berthd's config reload). Running plugin execs finish with the dirs they began with; cached
  // results keep the config their ADD used, so DEL of existing pods is unaffected.
  void set_dirs(const std::string& conf_dir, const std::vector<std::string>& plugin_dirs);

  // UpdateRuntimeConfig's pod CIDR (kept and reported; plugins keep their own IPAM ranges).
  void set_pod_cidr(const std::string& cidr);
  std::string pod_cidr() const;

  CniOptions options() const;  // a copy: the dirs may change (set_dirs)

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "10.0.0.0/24" or a comma-separated dual-stack pair; the error names what is wrong.
Status validate_pod_cidr(const std::string& cidr);

}  // namespace berth
