// CniManager: picks the pod network from the conf dir, runs the plugin chain and keeps the result
// cache. The cache entry is written before the first plugin runs, so even an ADD cut short by a
// crash leaves what DEL needs to release the address.
#include "berth/cni_manager.h"

#include <spdlog/spdlog.h>

#include <arpa/inet.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "berth/atomic_file.h"
#include "berth/fault_point.h"
#include "berth/mutex.h"
#include "capability_args.h"
#include "cni_result.h"
#include "conf_dir_watcher.h"
#include "network_config.h"
#include "plugin_exec.h"
#include "result_cache.h"

namespace berth {

using nlohmann::json;
using namespace cni;

struct CniManager::State {
  CniOptions opt;
  ResultCache cache;
  mutable Mutex mu;
  std::shared_ptr<const NetworkConfigList> network BERTH_GUARDED_BY(mu);  // the conf dir's pick; null when none
  std::string conf_error BERTH_GUARDED_BY(mu);                            // why there is none
  mutable NetworkReadiness last_readiness BERTH_GUARDED_BY(mu);           // the last answer, to log only its changes
  std::string pod_cidr BERTH_GUARDED_BY(mu);
  std::unique_ptr<ConfDirWatcher> watcher;
  ExecObserver observer;
  std::set<std::string> orphans BERTH_GUARDED_BY(mu);  // sandbox ids gone with their network still set up

  // DEL of every orphan but `skip`; one stays an orphan until its DEL succeeds.
  void retry_orphans(const std::string& skip);
  // DEL of one sandbox's cached entry (or, when that entry is corrupt, with the current network).
  Status teardown_entry(const std::string& sandbox_id, const std::string& netns_path);
  // DEL after a failed or unusable ADD, with the entry ADD used; an orphan when it fails too.
  void undo_add(CacheEntry& e, const nlohmann::json& prev);
  std::shared_ptr<const NetworkConfigList> current_network() const {
    MutexLock lock(mu);
    return network;
  }

  explicit State(CniOptions o)
      : opt(std::move(o)),
        cache(opt.cache_dir),
        observer{opt.on_plugin_run, opt.on_busy_retry},
        conf_dir_now(opt.conf_dir),
        plugin_dirs_now(opt.plugin_dirs) {}
  ExecSettings exec() const { return {plugin_dirs(), opt.exec_timeout, opt.busy_retry_budget, &observer}; }
  // The dirs change at a config reload (set_dirs); opt keeps the ones berthd started with.
  mutable Mutex dirs_mu;
  std::string conf_dir_now BERTH_GUARDED_BY(dirs_mu);
  std::vector<std::string> plugin_dirs_now BERTH_GUARDED_BY(dirs_mu);
  std::string conf_dir() const {
    MutexLock lock(dirs_mu);
    return conf_dir_now;
  }
  std::vector<std::string> plugin_dirs() const {
    MutexLock lock(dirs_mu);
    return plugin_dirs_now;
  }
};

CniManager::CniManager(CniOptions options) : state_(std::make_unique<State>(std::move(options))) {
  std::error_code ec;
  std::filesystem::create_directories(state_->opt.conf_dir, ec);
  reload();
  if (state_->opt.watch_conf_dir)
    state_->watcher = std::make_unique<ConfDirWatcher>(state_->opt.conf_dir, [this] { reload(); });
}

CniManager::~CniManager() { state_->watcher.reset(); }

CniOptions CniManager::options() const {
  MutexLock lock(state_->dirs_mu);
  CniOptions o = state_->opt;
  o.conf_dir = state_->conf_dir_now;
  o.plugin_dirs = state_->plugin_dirs_now;
  return o;
}

void CniManager::set_dirs(const std::string& conf_dir, const std::vector<std::string>& plugin_dirs) {
  bool conf_dir_changed = false;
  {
    MutexLock lock(state_->dirs_mu);
    conf_dir_changed = state_->conf_dir_now != conf_dir;
    state_->conf_dir_now = conf_dir;
    state_->plugin_dirs_now = plugin_dirs;
  }
  if (conf_dir_changed) {
    std::error_code ec;
    std::filesystem::create_directories(conf_dir, ec);
    if (state_->opt.watch_conf_dir) {
      state_->watcher.reset();  // joins the old dir's thread before the new one starts
      state_->watcher = std::make_unique<ConfDirWatcher>(conf_dir, [this] { reload(); });
    }
  }
  reload();
}

void CniManager::reload() {
  ConfDirScan scan = scan_conf_dir(state_->conf_dir());
  for (const auto& s : scan.skipped) spdlog::warn("cni: skipping {}", s);
  {
    MutexLock lock(state_->mu);
    state_->network = scan.network ? std::make_shared<const NetworkConfigList>(std::move(*scan.network)) : nullptr;
    state_->conf_error = scan.error;
  }
  (void)readiness();  // logs the change, if any
}

// Computed on every call, not cached at reload: plugin binaries come and go (an installer
// DaemonSet copies them in) without any change to the conf dir, and a few stat calls are cheap.
NetworkReadiness CniManager::readiness() const {
  std::shared_ptr<const NetworkConfigList> network;
  std::string conf_error;
  {
    MutexLock lock(state_->mu);
    network = state_->network;
    conf_error = state_->conf_error;
  }
  NetworkReadiness r;
  if (!network) {
    r.reason = "NetworkPluginNotReady";
    r.message = "no valid CNI network config in " + state_->conf_dir() + (conf_error.empty() ? "" : ": " + conf_error);
  } else {
    r.network_name = network->name;
    r.config_file = network->file;
    std::string missing;
    const std::vector<std::string> plugin_dirs = state_->plugin_dirs();
    for (const auto& type : network->plugin_types())
      if (!find_plugin(plugin_dirs, type).ok()) missing += (missing.empty() ? "" : ", ") + type;
    if (missing.empty()) {
      r.ready = true;
      r.message = "network " + r.network_name + " from " + r.config_file;
    } else {
      r.reason = "NetworkPluginNotReady";
      std::string dirs;
      for (const auto& d : plugin_dirs) dirs += (dirs.empty() ? "" : ":") + d;
      r.message =
          "network " + r.network_name + " (" + r.config_file + ") needs plugins not found in " + dirs + ": " + missing;
    }
  }
  MutexLock lock(state_->mu);
  NetworkReadiness& last = state_->last_readiness;
  if (r.ready != last.ready || r.message != last.message)
    spdlog::info("cni: {}", r.ready ? r.message : "not ready: " + r.message);
  last = r;
  return r;
}

// The config one plugin of the list gets: its own object plus the list's name and version, the
// previous plugin's result and the capability arguments it asked for.
static json plugin_config(const NetworkConfigList& network, size_t i, const json& prev, const json& caps,
                          bool with_prev) {
  json conf = network.plugins()[i];
  conf["name"] = network.name;
  conf["cniVersion"] = network.cni_version;
  if (with_prev && !prev.is_null()) conf["prevResult"] = prev;
  json rc = runtime_config_for(conf, caps);
  if (!rc.empty()) conf["runtimeConfig"] = rc;
  return conf;
}

static Status run_chain(const ExecSettings& exec, const CacheEntry& e, const std::string& command,
                        const std::string& netns) {
  // Read again through the parser: the entry's config is the one ADD used, from disk for a DEL
  // after a restart (the cache checked it when it read the file).
  auto network = network_config_from_json(e.config, "");
  if (!network.ok()) return network.status().context(command + " of " + e.container_id + ": cached network config");
  const std::vector<std::string> types = network->plugin_types();
  bool prev_for_del = compare_cni_versions(network->cni_version, "0.4.0") >= 0;
  Status first_error;
  for (size_t k = 0; k < types.size(); ++k) {
    size_t i = command == "DEL" ? types.size() - 1 - k : k;
    json conf = plugin_config(*network, i, e.result, e.capability_args, prev_for_del);
    PluginCall call{command, types[i], e.container_id, netns, e.ifname, e.cni_args, conf.dump()};
    auto out = exec_plugin(exec, call);
    if (!out.ok()) {
      if (command != "DEL") return out.status();
      if (first_error.ok()) first_error = out.status();  // DEL goes on: every plugin gets to release
    }
  }
  return first_error;
}

void CniManager::State::undo_add(CacheEntry& e, const json& prev) {
  e.result = prev;
  Status undo = run_chain(exec(), e, "DEL", e.netns);
  if (undo.ok()) {
    // A stale entry only costs a harmless DEL at the next start (it belongs to no sandbox).
    if (Status s = cache.remove(e); !s.ok())
      spdlog::error("cni: undo of a failed ADD of {}: {}", e.container_id, s.message());
    return;
  }
  spdlog::error("cni: DEL after a failed ADD of {}: {}; retried on the next teardown", e.container_id, undo.message());
  MutexLock lock(mu);
  orphans.insert(e.container_id);
}

Result<PodNetworkStatus> CniManager::setup(const PodNetworkRequest& req) {
  std::shared_ptr<const NetworkConfigList> network = state_->current_network();
  if (!network) return failed_precondition("network setup: " + readiness().message);
  auto caps = capability_args(req, network->plugins());
  if (!caps.ok()) return caps.status().context("network setup");
  CacheEntry e;
  e.container_id = req.sandbox_id;
  e.ifname = "eth0";
  e.network_name = network->name;
  e.config = network->raw;
  e.cni_args = "IgnoreUnknown=1;K8S_POD_NAMESPACE=" + req.pod_namespace + ";K8S_POD_NAME=" + req.pod_name +
               ";K8S_POD_INFRA_CONTAINER_ID=" + req.sandbox_id + ";K8S_POD_UID=" + req.pod_uid;
  e.capability_args = *caps;
  e.netns = req.netns_path;
  if (Status s = state_->cache.save(e); !s.ok()) return s.context("network setup");
  fault_point(FaultPoint::run_pod_sandbox_cni_entry_saved);
  if (req.netns_ready.valid()) {
    if (Status made = req.netns_ready.get(); !made.ok()) {
      // Nothing was ADDed; an entry left behind would only cost a harmless DEL at teardown.
      if (Status s = state_->cache.remove(e); !s.ok())
        spdlog::warn("cni: setup of {} called off: {}", e.container_id, s.message());
      return made.context("network setup of " + e.container_id);
    }
  }

  // From here on every failure DELs what ADD may have set up (address, veth, rules) before
  // returning, with the very config ADD used.
  json prev;
  const std::vector<std::string> types = network->plugin_types();
  for (size_t i = 0; i < types.size(); ++i) {
    json conf = plugin_config(*network, i, prev, e.capability_args, true);
    PluginCall call{"ADD", types[i], e.container_id, e.netns, e.ifname, e.cni_args, conf.dump()};
    auto out = exec_plugin(state_->exec(), call);
    json result = out.ok() ? json::parse(*out, nullptr, false) : json();
    Status failed = !out.ok()               ? out.status()
                    : result.is_discarded() ? internal_error("plugin " + call.type + " printed no JSON result")
                                            : ok_status();
    if (!failed.ok()) {
      state_->undo_add(e, prev);
      return failed.context("network setup of " + e.container_id);
    }
    prev = result;
    fault_point(FaultPoint::run_pod_sandbox_cni_plugin_added);
  }
  auto ips = result_ips(prev);
  Status failed = ips.ok() ? ok_status() : ips.status();
  if (failed.ok()) {
    e.result = prev;
    failed = state_->cache.save(e, false);
  }
  if (!failed.ok()) {
    // A result we could not read is not handed to DEL as prevResult: a plugin that parses it
    // (portmap does) would fail the DEL too, and DEL must work from the config alone anyway.
    state_->undo_add(e, ips.ok() ? prev : json());
    return failed.context("network setup of " + e.container_id);
  }
  return PodNetworkStatus{e.network_name, *ips, prev.dump()};
}

// The netns to hand DEL: the path when it is a network namespace, else empty. A path that is gone
// (after a reboot) or is still a plain file (a crash between the pin file's creation and its bind
// mount, with ADD's intent already recorded) would make the plugins fail DEL on it ("unknown FS
// magic") for good; with an empty CNI_NETNS they release the address and skip the in-netns part.
// proc's magic is what pre-3.19 kernels give for /proc/<pid>/ns/net.
static std::string netns_for_del(const std::string& path) {
  if (path.empty()) return path;
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return "";
  if (fs.f_type == static_cast<decltype(fs.f_type)>(NSFS_MAGIC) ||
      fs.f_type == static_cast<decltype(fs.f_type)>(PROC_SUPER_MAGIC))
    return path;
  spdlog::warn("cni: {} is not a network namespace (filesystem magic {:x}); DEL runs without one", path,
               static_cast<unsigned long>(fs.f_type));
  return "";
}

// DEL of one sandbox's cached entry; OK when there is none. With no netns_path, the netns ADD
// ran in is used while it is one. A corrupt entry must not wedge the pod (every Stop and Remove
// would fail for good): it is logged, DEL runs with the current network config as a runtime
// without a cache would (host-local releases by container id), and the entry goes once that
// DEL succeeded, or at once when there is no network to DEL with.
Status CniManager::State::teardown_entry(const std::string& sandbox_id, const std::string& netns_path) {
  std::vector<std::string> corrupt;
  auto found = cache.find(sandbox_id, "eth0", &corrupt);
  if (!found.ok()) return found.status();
  if (*found) {
    const CacheEntry& e = **found;
    std::string netns = netns_for_del(netns_path.empty() ? e.netns : netns_path);
    if (Status s = run_chain(exec(), e, "DEL", netns); !s.ok()) return s;
    return corrupt.empty() ? cache.remove(e) : cache.remove_matching(sandbox_id, "eth0");
  }
  if (corrupt.empty()) return ok_status();
  for (const auto& c : corrupt) spdlog::error("cni: corrupt result cache entry of {}: {}", sandbox_id, c);
  std::shared_ptr<const NetworkConfigList> network = current_network();
  if (!network) {
    spdlog::warn("cni: no network config to DEL {} with; dropping its corrupt cache entry", sandbox_id);
    return cache.remove_matching(sandbox_id, "eth0");
  }
  CacheEntry e;
  e.container_id = sandbox_id;
  e.ifname = "eth0";
  e.network_name = network->name;
  e.config = network->raw;
  e.cni_args = "IgnoreUnknown=1;K8S_POD_INFRA_CONTAINER_ID=" + sandbox_id;
  e.capability_args = json::object();
  std::string netns = netns_for_del(netns_path);
  spdlog::warn("cni: DEL of {} with the current network {} instead of its corrupt cache entry", sandbox_id,
               network->name);
  if (Status s = run_chain(exec(), e, "DEL", netns); !s.ok()) return s.context("DEL without a readable cache entry");
  return cache.remove_matching(sandbox_id, "eth0");
}

void CniManager::State::retry_orphans(const std::string& skip) {
  std::set<std::string> todo;
  {
    MutexLock lock(mu);
    todo = orphans;
  }
  todo.erase(skip);
  for (const auto& id : todo) {
    if (Status s = teardown_entry(id, ""); !s.ok()) {
      spdlog::warn("cni: releasing the network of gone sandbox {}: {}", id, s.message());
      continue;
    }
    spdlog::info("cni: released the network of gone sandbox {}", id);
    MutexLock lock(mu);
    orphans.erase(id);
  }
}

void CniManager::adopt_orphans(const std::vector<std::string>& live) {
  std::set<std::string> alive(live.begin(), live.end());
  MutexLock lock(state_->mu);
  for (const auto& t : remove_atomic_write_leftovers(state_->cache.dir()))
    spdlog::info("cni: removed {}, a cache write cut short", t);
  for (const auto& id : state_->cache.container_ids())
    if (!alive.count(id)) state_->orphans.insert(id);
}

void CniManager::retry_orphans() { state_->retry_orphans(""); }

Status CniManager::teardown(const std::string& sandbox_id, const std::string& netns_path) {
  state_->retry_orphans(sandbox_id);
  return state_->teardown_entry(sandbox_id, netns_path).context("network teardown of " + sandbox_id);
}

Status CniManager::check(const std::string& sandbox_id, const std::string& netns_path) {
  auto found = state_->cache.find(sandbox_id, "eth0");
  if (!found.ok()) return found.status();
  if (!*found) return not_found("network check: no network was set up for " + sandbox_id);
  const CacheEntry& e = **found;
  auto network = network_config_from_json(e.config, "");
  if (!network.ok()) return network.status().context("network check of " + sandbox_id + ": cached config");
  if (compare_cni_versions(network->cni_version, "0.4.0") < 0 || network->disable_check) return ok_status();
  return run_chain(state_->exec(), e, "CHECK", netns_path).context("network check of " + sandbox_id);
}

Result<PodNetworkStatus> CniManager::status(const std::string& sandbox_id) const {
  auto found = state_->cache.find(sandbox_id, "eth0");
  if (!found.ok()) return found.status();
  if (!*found || (*found)->result.is_null()) return not_found("no network result for " + sandbox_id);
  auto ips = result_ips((*found)->result);
  if (!ips.ok()) return ips.status();
  return PodNetworkStatus{(*found)->network_name, *ips, (*found)->result.dump()};
}

void CniManager::set_pod_cidr(const std::string& cidr) {
  MutexLock lock(state_->mu);
  state_->pod_cidr = cidr;
}

std::string CniManager::pod_cidr() const {
  MutexLock lock(state_->mu);
  return state_->pod_cidr;
}

Status validate_pod_cidr(const std::string& cidr) {
  size_t start = 0;
  while (start <= cidr.size()) {
    size_t end = cidr.find(',', start);
    std::string one = cidr.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t slash = one.find('/');
    if (one.empty() || slash == std::string::npos)
      return invalid_argument("runtime_config.network_config.pod_cidr: '" + cidr + "' is not CIDR notation");
    std::string ip = one.substr(0, slash), bits = one.substr(slash + 1);
    bool v6 = ip.find(':') != std::string::npos;
    int max = v6 ? 128 : 32;
    char* endp = nullptr;
    long n = std::strtol(bits.c_str(), &endp, 10);
    unsigned char buf[16];
    if (bits.empty() || *endp || n < 0 || n > max || inet_pton(v6 ? AF_INET6 : AF_INET, ip.c_str(), buf) != 1)
      return invalid_argument("runtime_config.network_config.pod_cidr: '" + one + "' is not a valid CIDR");
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return ok_status();
}

}  // namespace berth
