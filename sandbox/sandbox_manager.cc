// Sandbox lifecycle. Locking: Impl::mu guards the index and the name reservations and is never
// held across an exec; each Sandbox has its own mutex for its stop/remove. RunPodSandbox keeps a
// rollback list and undoes every finished step when a later one fails.
#include "berth/sandbox_manager.h"
#include "berth/file_text.h"
#include "berth/name_reservations.h"
#include "berth/object_id.h"
#include "berth/rollback.h"
#include "berth/wall_clock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <spdlog/spdlog.h>
#include <sstream>

#include "berth/atomic_file.h"
#include "berth/cgroups_path.h"
#include "berth/oci_runtime.h"
#include "berth/sandbox_checkpoint.h"
#include "netns.h"
#include "pause_spec.h"
#include "sandbox_files.h"

namespace berth {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

namespace {

// Field 22 of /proc/<pid>/stat: tells a live pause from a recycled pid. 0 when gone or a zombie.
unsigned long long process_start_time(int pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  std::getline(in, s);
  size_t paren = s.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream f(s.substr(paren + 2));
  std::string state;
  f >> state;
  if (state == "Z" || state == "X") return 0;
  std::string skip;
  for (int i = 0; i < 18; ++i) f >> skip;  // fields 4..21
  unsigned long long start = 0;
  f >> start;
  return start;
}

std::string name_key(const v1::PodSandboxMetadata& m) {
  return m.name() + "_" + m.namespace_() + "_" + m.uid() + "_" + std::to_string(m.attempt());
}

std::string checkpoint_name_key(const SandboxCheckpoint& cp) {
  return cp.name + "_" + cp.namespace_ + "_" + cp.uid + "_" + std::to_string(cp.attempt);
}

// The pause image's layers, read-only: overlayfs for several layers, a bind mount for one
// (overlayfs wants two lower layers when it has no upper one).
Result<std::string> mount_image_rootfs(const PauseImage& image, const std::string& target) {
  if (image.layer_dirs.empty()) return invalid_argument("sandbox image has no layers");
  if (image.args.empty()) return invalid_argument("sandbox image has no Entrypoint or Cmd");
  if (::mkdir(target.c_str(), 0755) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + target);
  if (image.layer_dirs.size() == 1) {
    if (::mount(image.layer_dirs[0].c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, target.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      int err = errno;
      ::umount2(target.c_str(), MNT_DETACH);
      return errno_status(err, "mount sandbox image rootfs");
    }
    return target;
  }
  std::string lower;
  for (auto it = image.layer_dirs.rbegin(); it != image.layer_dirs.rend(); ++it) lower += (lower.empty() ? "" : ":") + *it;
  if (::mount("overlay", target.c_str(), "overlay", MS_RDONLY, ("lowerdir=" + lower).c_str()) != 0)
    return errno_status(errno, "mount sandbox image rootfs (overlay)");
  return target;
}

Status unmount_path(const std::string& target) {
  if (::umount2(target.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    return errno_status(errno, "unmount " + target);
  return ok_status();
}

Status unmount_image_rootfs(const std::string& target) { return unmount_path(target); }

Status mount_pod_shm(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return errno_status(errno, "mkdir " + path);
  if (::mount("shm", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k") != 0)
    return errno_status(errno, "mount the pod's shm on " + path);
  return ok_status();
}

}  // namespace

struct Sandbox {
  SandboxCheckpoint cp;
  std::string bundle, cgroups_path;
  int pid = 0;
  unsigned long long start_time = 0;
  bool stopped = false;
  std::vector<std::string> ips;
  std::mutex op;

  bool ready() const { return !stopped && pid > 0 && process_start_time(pid) == start_time; }
};

struct SandboxManager::Impl {
  SandboxManagerOptions opt;
  std::string pause_rootfs, netns_dir, bundles_dir, checkpoints_dir, quarantine_dir;
  int own_oom_score_adj = 0;
  bool can_lower_oom = true;
  std::once_flag oom_warning;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Sandbox>> sandboxes;
  NameReservations names;

  Result<OciRuntime> runtime_for(const std::string& handler) const {
    std::string h = handler.empty() ? opt.default_runtime : handler;
    auto it = opt.runtimes.find(h);
    if (it == opt.runtimes.end()) {
      std::string known;
      for (const auto& [k, v] : opt.runtimes) known += (known.empty() ? "" : ", ") + k;
      return invalid_argument("runtime_handler: unknown handler '" + handler + "' (known: " + known + ")");
    }
    return OciRuntime(it->second.first, it->second.second, opt.systemd_cgroup);
  }

  int oom_score_adj(int wanted) {
    if (can_lower_oom || wanted >= own_oom_score_adj) return wanted;
    std::call_once(oom_warning, [&] {
      spdlog::warn("berthd lacks CAP_SYS_RESOURCE: OOM score adjustments below its own ({}) are raised to {}",
                   own_oom_score_adj, own_oom_score_adj);
    });
    return own_oom_score_adj;
  }

  std::shared_ptr<Sandbox> find(const std::string& id_or_prefix, Status* err) {
    std::lock_guard lock(mu);
    return find_by_id_or_prefix(sandboxes, id_or_prefix, "pod sandbox", "pod_sandbox_id", err);
  }


  // Netns pins and bundles no checkpoint owns: a RunPodSandbox cut short by a crash before its
  // checkpoint was written, or whose rollback failed. Each goes with a log line.
  void remove_leftovers() {
    std::error_code ec;
    for (const auto& dir : {netns_dir, bundles_dir}) {
      for (const auto& e : fs::directory_iterator(dir, ec)) {
        std::string id = e.path().filename();
        if (sandboxes.count(id)) continue;
        Status s = dir == netns_dir ? remove_pinned_netns(e.path()) : unmount_image_rootfs(e.path() / "rootfs");
        if (s.ok() && dir == bundles_dir) s = unmount_path(e.path() / "shm");
        std::error_code rec;
        if (s.ok() && dir == bundles_dir) fs::remove_all(e.path(), rec);
        if (!s.ok() || rec) spdlog::warn("sandboxes: cannot remove leftover {}: {}", e.path().string(), s.ok() ? rec.message() : s.message());
        else spdlog::info("sandboxes: removed leftover {} of no known sandbox", e.path().string());
      }
    }
  }

  Status stop_locked(Sandbox& s) {
    // CNI DEL first, while the netns still exists. It runs on every stop (a no-op once the result
    // cache entry is gone), so an ADD cut short by a crash, or a network never torn down because
    // berthd died between the two, is released too, also with no netns after a reboot.
    if (!s.cp.host_network && opt.network.teardown) {
      if (Status st = opt.network.teardown(s.cp.id, s.cp.netns_path); !st.ok()) return st.context("stop sandbox " + s.cp.id);
      s.ips.clear();
    }
    if (s.stopped) return ok_status();
    auto rt = runtime_for(s.cp.runtime_handler);
    if (!rt.ok()) return rt.status();
    if (Status st = rt->remove(s.cp.id); !st.ok()) return st.context("stop sandbox " + s.cp.id);
    if (Status st = remove_pinned_netns(s.cp.netns_path); !st.ok()) return st.context("stop sandbox " + s.cp.id);
    if (Status st = unmount_image_rootfs(s.bundle + "/rootfs"); !st.ok()) return st.context("stop sandbox " + s.cp.id);
    if (Status st = unmount_path(s.bundle + "/shm"); !st.ok()) return st.context("stop sandbox " + s.cp.id);
    s.stopped = true;
    s.pid = 0;
    return ok_status();
  }
};

SandboxManager::SandboxManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SandboxManager::~SandboxManager() = default;

Result<std::unique_ptr<SandboxManager>> SandboxManager::open(SandboxManagerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->opt = std::move(options);
  impl->pause_rootfs = impl->opt.state_dir + "/pause/rootfs";
  impl->netns_dir = impl->opt.state_dir + "/netns";
  impl->bundles_dir = impl->opt.state_dir + "/sandboxes";
  impl->checkpoints_dir = impl->opt.root_dir + "/sandboxes";
  impl->quarantine_dir = impl->opt.root_dir + "/sandboxes-quarantine";
  std::error_code ec;
  for (const auto& d : {impl->netns_dir, impl->bundles_dir, impl->checkpoints_dir}) {
    fs::create_directories(d, ec);
    if (ec) return Status(Code::internal, "sandboxes: mkdir " + d + ": " + ec.message());
  }
  // The pause rootfs: berth-pause and the mount points runc needs, shared read-only by every pause.
  for (const char* d : {"", "/proc", "/dev", "/sys", "/etc"}) fs::create_directories(impl->pause_rootfs + d, ec);
  // Copied then renamed into place: pauses of recovered sandboxes may be running the old file.
  std::string next = impl->pause_rootfs + "/pause.new";
  fs::copy_file(impl->opt.pause_binary, next, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::permissions(next, fs::perms(0755), ec);
  if (!ec) fs::rename(next, impl->pause_rootfs + "/pause", ec);
  if (ec) return Status(Code::internal, "sandboxes: install pause binary " + impl->opt.pause_binary + ": " + ec.message());

  impl->own_oom_score_adj = std::atoi(read_text_file("/proc/self/oom_score_adj").c_str());
  std::string status = read_text_file("/proc/self/status");
  if (size_t at = status.find("CapEff:"); at != std::string::npos) {
    unsigned long long eff = std::stoull(status.substr(at + 7), nullptr, 16);
    impl->can_lower_oom = (eff >> 24) & 1;  // CAP_SYS_RESOURCE
  }

  auto loaded = load_checkpoints(impl->checkpoints_dir, impl->quarantine_dir);
  for (const auto& q : loaded.quarantined) spdlog::error("sandbox checkpoint quarantined: {}", q);
  for (auto& cp : loaded.valid) {
    auto s = std::make_shared<Sandbox>();
    s->cp = cp;
    s->bundle = impl->bundles_dir + "/" + cp.id;
    s->stopped = true;
    // Derived again, as at the start: stats and verbose status read the pod's cgroup by it.
    if (auto cg = cgroups_path_for(cp.cgroup_parent, cp.id, impl->opt.systemd_cgroup); cg.ok()) s->cgroups_path = *cg;
    if (auto rt = impl->runtime_for(cp.runtime_handler); rt.ok()) {
      if (auto st = rt->state(cp.id); st.ok() && st->status == "running") {
        s->pid = st->pid;
        s->start_time = process_start_time(st->pid);
        s->stopped = false;
      }
    }
    if (!cp.host_network && impl->opt.network.recorded_ips) {
      s->ips = impl->opt.network.recorded_ips(cp.id);
    }
    (void)impl->names.reserve(checkpoint_name_key(cp), cp.id, "sandbox");
    if (!cp.image_id.empty() && impl->opt.hold_image) impl->opt.hold_image(cp.image_id);
    impl->sandboxes[cp.id] = s;
  }
  if (!loaded.valid.empty()) spdlog::info("sandboxes: recovered {} from checkpoints", loaded.valid.size());
  impl->remove_leftovers();
  return std::unique_ptr<SandboxManager>(new SandboxManager(std::move(impl)));
}

Result<std::string> SandboxManager::run(const v1::PodSandboxConfig& config, const std::string& handler) {
  const auto& md = config.metadata();
  if (md.name().empty()) return invalid_argument("config.metadata.name: must not be empty");
  if (md.namespace_().empty()) return invalid_argument("config.metadata.namespace: must not be empty");
  if (md.uid().empty()) return invalid_argument("config.metadata.uid: must not be empty");
  auto rt = impl_->runtime_for(handler);
  if (!rt.ok()) return rt.status();
  const auto& ns = config.linux().security_context().namespace_options();
  bool host_net = ns.network() == v1::NODE;

  std::string id = new_object_id();
  std::string key = name_key(md);
  if (Status s = impl_->names.reserve(key, id, "sandbox"); !s.ok()) return s;
  Rollback undo;
  undo.add([&] { impl_->names.release(key, id); });
  auto fail = [&](const Status& s) {
    undo.run();
    return s.context("run pod sandbox " + md.namespace_() + "/" + md.name());
  };

  auto sb = std::make_shared<Sandbox>();
  sb->bundle = impl_->bundles_dir + "/" + id;
  if (::mkdir(sb->bundle.c_str(), 0711) != 0) return fail(errno_status(errno, "mkdir " + sb->bundle));
  undo.add([b = sb->bundle] {
    std::error_code ec;
    fs::remove_all(b, ec);
  });

  // The pod's /dev/shm: one tmpfs the pause and every container of the pod bind-mount.
  std::string shm = ns.ipc() == v1::NODE ? "/dev/shm" : sb->bundle + "/shm";
  if (ns.ipc() != v1::NODE) {
    if (Status s = mount_pod_shm(shm); !s.ok()) return fail(s);
    undo.add([shm] { (void)unmount_path(shm); });
  }

  auto cgroups = cgroups_path_for(config.linux().cgroup_parent(), id, impl_->opt.systemd_cgroup);
  if (!cgroups.ok()) return fail(cgroups.status());
  sb->cgroups_path = *cgroups;

  std::string netns;
  if (!host_net) {
    auto pin = create_pinned_netns(impl_->netns_dir, id);
    if (!pin.ok()) return fail(pin.status());
    netns = *pin;
    undo.add([netns] { (void)remove_pinned_netns(netns); });
  }

  ResolvConfSettings dns{{config.dns_config().servers().begin(), config.dns_config().servers().end()},
                  {config.dns_config().searches().begin(), config.dns_config().searches().end()},
                  {config.dns_config().options().begin(), config.dns_config().options().end()}};
  if (host_net) dns = {};
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string hostname = host_net || config.hostname().empty() ? std::string(host) : config.hostname();
  for (Status s : {write_resolv_conf(sb->bundle + "/resolv.conf", dns), write_hostname_file(sb->bundle + "/hostname", hostname),
                   write_hosts_file(sb->bundle + "/hosts", hostname)})
    if (!s.ok()) return fail(s);

  PauseSpecInputs spec_in{.rootfs = impl_->pause_rootfs, .netns_path = netns, .cgroups_path = sb->cgroups_path,
                          .shm_path = shm, .oom_score_adj = impl_->oom_score_adj(-998)};
  if (impl_->opt.pause_image) {
    auto image = impl_->opt.pause_image();
    if (!image.ok()) return fail(image.status().context("sandbox image"));
    if (impl_->opt.hold_image) {
      impl_->opt.hold_image(image->id);
      undo.add([this, img = image->id] { impl_->opt.release_image(img); });
    }
    sb->cp.image_id = image->id;
    auto root = mount_image_rootfs(*image, sb->bundle + "/rootfs");
    if (!root.ok()) return fail(root.status());
    undo.add([r = *root] { (void)unmount_image_rootfs(r); });
    spec_in.rootfs = *root;
    spec_in.args = image->args;
  }
  auto spec = build_pause_spec(config, spec_in);
  if (!spec.ok()) return fail(spec.status());
  if (Status s = write_file_atomically(sb->bundle + "/config.json", spec->dump(), 0600, false); !s.ok()) return fail(s);

  SandboxCheckpoint& cp = sb->cp;
  cp.id = id;
  cp.name = md.name();
  cp.namespace_ = md.namespace_();
  cp.uid = md.uid();
  cp.attempt = md.attempt();
  cp.netns_path = netns;
  cp.host_network = host_net;
  cp.privileged = config.linux().security_context().privileged();
  cp.network_mode = ns.network();
  cp.pid_mode = ns.pid();
  cp.ipc_mode = ns.ipc();
  cp.cgroup_parent = config.linux().cgroup_parent();
  cp.runtime_handler = handler.empty() ? impl_->opt.default_runtime : handler;
  cp.hostname = hostname;
  cp.log_directory = config.log_directory();
  for (const auto& p : config.port_mappings())
    cp.port_mappings.push_back({v1::Protocol_Name(p.protocol()), p.container_port(), p.host_port(), p.host_ip()});
  cp.labels = {config.labels().begin(), config.labels().end()};
  cp.annotations = {config.annotations().begin(), config.annotations().end()};
  cp.created_at = wall_clock_ns();
  if (Status s = write_checkpoint(impl_->checkpoints_dir, cp); !s.ok()) return fail(s);
  undo.add([&] { (void)remove_checkpoint(impl_->checkpoints_dir, id); });

  if (Status s = rt->create(id, sb->bundle); !s.ok()) {
    (void)rt->remove(id);
    return fail(s);
  }
  undo.add([&] { (void)rt->remove(id); });
  if (Status s = rt->start(id); !s.ok()) return fail(s);
  sb->pid = std::atoi(read_text_file(sb->bundle + "/pid").c_str());
  sb->start_time = process_start_time(sb->pid);
  if (!host_net && impl_->opt.network.setup) {
    auto ips = impl_->opt.network.setup({id, md.name(), md.namespace_(), md.uid(), netns, &config});
    if (!ips.ok()) return fail(ips.status());
    sb->ips = *ips;
  }
  {
    std::lock_guard lock(impl_->mu);
    impl_->sandboxes[id] = sb;
  }
  undo.dismiss();
  return id;
}

Status SandboxManager::stop(const std::string& id_or_prefix) {
  auto s = impl_->find(id_or_prefix, nullptr);
  if (!s) return ok_status();  // CRI: stopping an unknown sandbox succeeds
  std::lock_guard lock(s->op);
  return impl_->stop_locked(*s);
}

Status SandboxManager::remove(const std::string& id_or_prefix) {
  auto s = impl_->find(id_or_prefix, nullptr);
  if (!s) return ok_status();
  std::lock_guard lock(s->op);
  if (Status st = impl_->stop_locked(*s); !st.ok()) return st.context("remove sandbox " + s->cp.id);
  // A sandbox recovered as stopped (its pause died while berthd was down) may still hold mounts.
  for (const char* m : {"/shm", "/rootfs"})
    if (Status st = unmount_path(s->bundle + m); !st.ok()) return st.context("remove sandbox " + s->cp.id);
  std::error_code ec;
  fs::remove_all(s->bundle, ec);
  if (ec) return internal_error("remove sandbox " + s->cp.id + ": " + ec.message());
  if (Status st = remove_checkpoint(impl_->checkpoints_dir, s->cp.id); !st.ok()) return st;
  if (!s->cp.image_id.empty() && impl_->opt.release_image) impl_->opt.release_image(s->cp.image_id);
  std::lock_guard ilock(impl_->mu);
  impl_->sandboxes.erase(s->cp.id);
  impl_->names.release(checkpoint_name_key(s->cp), s->cp.id);
  return ok_status();
}

static void fill_metadata(const SandboxCheckpoint& cp, v1::PodSandboxMetadata* m) {
  m->set_name(cp.name);
  m->set_namespace_(cp.namespace_);
  m->set_uid(cp.uid);
  m->set_attempt(cp.attempt);
}

Status SandboxManager::status(const std::string& id_or_prefix, bool verbose, v1::PodSandboxStatusResponse* out) {
  Status err;
  auto s = impl_->find(id_or_prefix, &err);
  if (!s) return err;
  const SandboxCheckpoint& cp = s->cp;
  auto* st = out->mutable_status();
  st->set_id(cp.id);
  fill_metadata(cp, st->mutable_metadata());
  bool ready = s->ready();
  st->set_state(ready ? v1::SANDBOX_READY : v1::SANDBOX_NOTREADY);
  st->set_created_at(cp.created_at);
  auto* net = st->mutable_network();
  if (!s->ips.empty()) {
    net->set_ip(s->ips[0]);
    for (size_t i = 1; i < s->ips.size(); ++i) net->add_additional_ips()->set_ip(s->ips[i]);
  }
  auto* opts = st->mutable_linux()->mutable_namespaces()->mutable_options();
  opts->set_network(static_cast<v1::NamespaceMode>(cp.network_mode));
  opts->set_pid(static_cast<v1::NamespaceMode>(cp.pid_mode));
  opts->set_ipc(static_cast<v1::NamespaceMode>(cp.ipc_mode));
  st->mutable_labels()->insert(cp.labels.begin(), cp.labels.end());
  st->mutable_annotations()->insert(cp.annotations.begin(), cp.annotations.end());
  st->set_runtime_handler(cp.runtime_handler);
  if (verbose) {
    nlohmann::json info = {{"pid", ready ? s->pid : 0},
                           {"netns_path", cp.netns_path},
                           {"checkpoint", checkpoint_path(impl_->checkpoints_dir, cp.id)},
                           {"bundle", s->bundle},
                           {"cgroups_path", s->cgroups_path}};
    if (!cp.host_network && ready && impl_->opt.network.check) {
      Status check = impl_->opt.network.check(cp.id, cp.netns_path);
      info["network_check"] = check.ok() ? std::string("ok") : check.message();
    }
    auto spec = nlohmann::json::parse(read_text_file(s->bundle + "/config.json"), nullptr, false);
    if (!spec.is_discarded()) info["runtimeSpec"] = spec;
    // The network check's message may carry a plugin's raw output: dump() throws on bytes that
    // are not UTF-8, so they are replaced instead.
    (*out->mutable_info())["info"] = info.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return ok_status();
}

std::vector<v1::PodSandbox> SandboxManager::list(const v1::PodSandboxFilter& f) {
  std::vector<std::shared_ptr<Sandbox>> all;
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& [id, s] : impl_->sandboxes)
      if (f.id().empty() || id.rfind(f.id(), 0) == 0) all.push_back(s);
  }
  std::vector<v1::PodSandbox> out;
  for (const auto& s : all) {
    const SandboxCheckpoint& cp = s->cp;
    v1::PodSandboxState state = s->ready() ? v1::SANDBOX_READY : v1::SANDBOX_NOTREADY;
    if (f.has_state() && f.state().state() != state) continue;
    bool labels_match = true;
    for (const auto& [k, v] : f.label_selector()) {
      auto it = cp.labels.find(k);
      if (it == cp.labels.end() || it->second != v) labels_match = false;
    }
    if (!labels_match) continue;
    v1::PodSandbox p;
    p.set_id(cp.id);
    fill_metadata(cp, p.mutable_metadata());
    p.set_state(state);
    p.set_created_at(cp.created_at);
    p.mutable_labels()->insert(cp.labels.begin(), cp.labels.end());
    p.mutable_annotations()->insert(cp.annotations.begin(), cp.annotations.end());
    p.set_runtime_handler(cp.runtime_handler);
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<SandboxInfo> SandboxManager::info(const std::string& id_or_prefix) {
  auto s = impl_->find(id_or_prefix, nullptr);
  if (!s) return std::nullopt;
  const SandboxCheckpoint& cp = s->cp;
  SandboxInfo info{cp.id, s->ready(), s->pid, cp.netns_path, s->cgroups_path, cp.cgroup_parent, s->bundle,
                   cp.ipc_mode == v1::NODE ? "/dev/shm" : s->bundle + "/shm", cp.runtime_handler, cp.log_directory,
                   cp.name, cp.namespace_, cp.uid, cp.hostname};
  info.host_network = cp.host_network;
  info.host_ipc = cp.ipc_mode == v1::NODE;
  info.host_pid = cp.pid_mode == v1::NODE;
  info.privileged = cp.privileged;
  return info;
}

size_t SandboxManager::ready_count() {
  std::vector<std::shared_ptr<Sandbox>> all;
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& [id, s] : impl_->sandboxes) all.push_back(s);
  }
  size_t n = 0;
  for (const auto& s : all) n += s->ready();
  return n;
}

}  // namespace berth
