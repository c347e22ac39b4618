// CniManager: picks the pod network from the conf dir, runs the plugin chain and keeps the result
// cache. The cache entry is written before the first plugin runs, so even an ADD cut short by a
// crash leaves what DEL needs to release the address.
#include "berth/cni_manager.h"

#include <spdlog/spdlog.h>

#include <arpa/inet.h>

#include <filesystem>
#include <mutex>
#include <set>

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
  mutable std::mutex mu;
  std::optional<NetworkConfigList> network;
  NetworkReadiness readiness;
  std::string pod_cidr;
  std::unique_ptr<ConfDirWatcher> watcher;
  ExecObserver observer;
  std::set<std::string> orphans;  // sandbox ids gone with their network still set up (guarded by mu)

  // DEL of every orphan but `skip`; one stays an orphan until its DEL succeeds.
  void retry_orphans(const std::string& skip);

  explicit State(CniOptions o) : opt(std::move(o)), cache(opt.cache_dir), observer{opt.on_plugin_run, opt.on_busy_retry} {}
  ExecSettings exec() const { return {opt.plugin_dirs, opt.exec_timeout, opt.busy_retry_budget, &observer}; }
};

CniManager::CniManager(CniOptions options) : state_(std::make_unique<State>(std::move(options))) {
  std::error_code ec;
  std::filesystem::create_directories(state_->opt.conf_dir, ec);
  reload();
  if (state_->opt.watch_conf_dir) state_->watcher = std::make_unique<ConfDirWatcher>(state_->opt.conf_dir, [this] { reload(); });
}

CniManager::~CniManager() { state_->watcher.reset(); }

const CniOptions& CniManager::options() const { return state_->opt; }

void CniManager::reload() {
  ConfDirScan scan = scan_conf_dir(state_->opt.conf_dir);
  for (const auto& s : scan.skipped) spdlog::warn("cni: skipping {}", s);
  NetworkReadiness r;
  if (!scan.network) {
    r.reason = "NetworkPluginNotReady";
    r.message = "no valid CNI network config in " + state_->opt.conf_dir + (scan.error.empty() ? "" : ": " + scan.error);
  } else {
    r.network_name = scan.network->name;
    r.config_file = scan.network->file;
    std::string missing;
    for (const auto& type : scan.network->plugin_types())
      if (!find_plugin(state_->opt.plugin_dirs, type).ok()) missing += (missing.empty() ? "" : ", ") + type;
    if (missing.empty()) {
      r.ready = true;
      r.message = "network " + r.network_name + " from " + r.config_file;
    } else {
      r.reason = "NetworkPluginNotReady";
      std::string dirs;
      for (const auto& d : state_->opt.plugin_dirs) dirs += (dirs.empty() ? "" : ":") + d;
      r.message = "network " + r.network_name + " (" + r.config_file + ") needs plugins not found in " + dirs + ": " + missing;
    }
  }
  std::lock_guard lock(state_->mu);
  bool changed = r.ready != state_->readiness.ready || r.config_file != state_->readiness.config_file;
  state_->network = scan.network;
  state_->readiness = r;
  if (changed) spdlog::info("cni: {}", r.ready ? r.message : "not ready: " + r.message);
}

NetworkReadiness CniManager::readiness() const {
  std::lock_guard lock(state_->mu);
  return state_->readiness;
}

// The config one plugin of the list gets: its own object plus the list's name and version, the
// previous plugin's result and the capability arguments it asked for.
static json plugin_config(const json& list, size_t i, const json& prev, const json& caps, bool with_prev) {
  json conf = list.at("plugins").at(i);
  conf["name"] = list.value("name", "");
  conf["cniVersion"] = list.value("cniVersion", "");
  if (with_prev && !prev.is_null()) conf["prevResult"] = prev;
  json rc = runtime_config_for(conf, caps);
  if (!rc.empty()) conf["runtimeConfig"] = rc;
  return conf;
}

static Status run_chain(const ExecSettings& exec, const CacheEntry& e, const std::string& command, const std::string& netns) {
  const json& plugins = e.config.at("plugins");
  bool prev_for_del = compare_cni_versions(e.config.value("cniVersion", ""), "0.4.0") >= 0;
  Status first_error;
  for (size_t k = 0; k < plugins.size(); ++k) {
    size_t i = command == "DEL" ? plugins.size() - 1 - k : k;
    json conf = plugin_config(e.config, i, e.result, e.capability_args, prev_for_del);
    PluginCall call{command, conf.value("type", ""), e.container_id, netns, e.ifname, e.cni_args, conf.dump()};
    auto out = exec_plugin(exec, call);
    if (!out.ok()) {
      if (command != "DEL") return out.status();
      if (first_error.ok()) first_error = out.status();  // DEL goes on: every plugin gets to release
    }
  }
  return first_error;
}

Result<PodNetworkStatus> CniManager::setup(const PodNetworkRequest& req) {
  std::optional<NetworkConfigList> network;
  {
    std::lock_guard lock(state_->mu);
    network = state_->network;
  }
  if (!network) return failed_precondition("network setup: " + readiness().message);
  auto caps = capability_args(req);
  if (!caps.ok()) return caps.status();
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

  json prev;
  const json& plugins = e.config.at("plugins");
  for (size_t i = 0; i < plugins.size(); ++i) {
    json conf = plugin_config(e.config, i, prev, e.capability_args, true);
    PluginCall call{"ADD", conf.value("type", ""), e.container_id, e.netns, e.ifname, e.cni_args, conf.dump()};
    auto out = exec_plugin(state_->exec(), call);
    json result = out.ok() ? json::parse(*out, nullptr, false) : json();
    Status failed = !out.ok() ? out.status()
                    : result.is_discarded() ? internal_error("network setup: plugin " + call.type + " printed no JSON result")
                                            : ok_status();
    if (!failed.ok()) {
      e.result = prev;
      Status undo = run_chain(state_->exec(), e, "DEL", e.netns);
      if (undo.ok()) {
        (void)state_->cache.remove(e);
      } else {
        spdlog::error("cni: DEL after a failed ADD of {}: {}; retried on the next teardown", e.container_id, undo.message());
        std::lock_guard lock(state_->mu);
        state_->orphans.insert(e.container_id);
      }
      return failed.context("network setup of " + e.container_id);
    }
    prev = result;
  }
  e.result = prev;
  if (Status s = state_->cache.save(e); !s.ok()) return s.context("network setup");
  auto ips = result_ips(prev);
  if (!ips.ok()) return ips.status();
  return PodNetworkStatus{e.network_name, *ips, prev.dump()};
}

// DEL of one sandbox's cached entry; OK when there is none. With no netns_path, the netns ADD
// ran in is used while it exists.
static Status teardown_entry(const ExecSettings& exec, const ResultCache& cache, const std::string& sandbox_id,
                             const std::string& netns_path) {
  auto found = cache.find(sandbox_id, "eth0");
  if (!found.ok()) return found.status();
  if (!*found) return ok_status();
  const CacheEntry& e = **found;
  std::error_code ec;
  std::string netns = netns_path.empty() ? e.netns : netns_path;
  if (!netns.empty() && !std::filesystem::exists(netns, ec)) netns.clear();
  if (Status s = run_chain(exec, e, "DEL", netns); !s.ok()) return s;
  return cache.remove(e);
}

void CniManager::State::retry_orphans(const std::string& skip) {
  std::set<std::string> todo;
  {
    std::lock_guard lock(mu);
    todo = orphans;
  }
  todo.erase(skip);
  for (const auto& id : todo) {
    if (Status s = teardown_entry(exec(), cache, id, ""); !s.ok()) {
      spdlog::warn("cni: releasing the network of gone sandbox {}: {}", id, s.message());
      continue;
    }
    spdlog::info("cni: released the network of gone sandbox {}", id);
    std::lock_guard lock(mu);
    orphans.erase(id);
  }
}

void CniManager::release_orphans(const std::vector<std::string>& live) {
  {
    std::set<std::string> alive(live.begin(), live.end());
    std::lock_guard lock(state_->mu);
    for (const auto& id : state_->cache.container_ids())
      if (!alive.count(id)) state_->orphans.insert(id);
  }
  state_->retry_orphans("");
}

Status CniManager::teardown(const std::string& sandbox_id, const std::string& netns_path) {
  state_->retry_orphans(sandbox_id);
  return teardown_entry(state_->exec(), state_->cache, sandbox_id, netns_path).context("network teardown of " + sandbox_id);
}

Status CniManager::check(const std::string& sandbox_id, const std::string& netns_path) {
  auto found = state_->cache.find(sandbox_id, "eth0");
  if (!found.ok()) return found.status();
  if (!*found) return not_found("network check: no network was set up for " + sandbox_id);
  const CacheEntry& e = **found;
  if (compare_cni_versions(e.config.value("cniVersion", ""), "0.4.0") < 0 || e.config.value("disableCheck", false))
    return ok_status();
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
  std::lock_guard lock(state_->mu);
  state_->pod_cidr = cidr;
}

std::string CniManager::pod_cidr() const {
  std::lock_guard lock(state_->mu);
  return state_->pod_cidr;
}

Status validate_pod_cidr(const std::string& cidr) {
  size_t start = 0;
  while (start <= cidr.size()) {
    size_t end = cidr.find(',', start);
    std::string one = cidr.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t slash = one.find('/');
    if (one.empty() || slash == std::string::npos) return invalid_argument("runtime_config.network_config.pod_cidr: '" + cidr + "' is not CIDR notation");
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
