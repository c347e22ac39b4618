// ContainerStatus, ListContainers and the info other modules read: all from memory, never an exec
// (verbose status also reads the bundle's config.json).
#include <sstream>

#include "berth/file_text.h"
#include "berth/mutex.h"
#include "berth/oci_spec.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

std::string stop_signal_name(int n) {
  if (n > 0 && n < 32) {
    const char* abbrev = sigabbrev_np(n);
    if (abbrev) return std::string("SIG") + abbrev;
  }
  return "";
}

bool labels_match(const v1::ContainerConfig& c, const google::protobuf::Map<std::string, std::string>& selector) {
  for (const auto& [k, v] : selector) {
    auto it = c.labels().find(k);
    if (it == c.labels().end() || it->second != v) return false;
  }
  return true;
}

}  // namespace

Status ContainerManager::status(const std::string& id_or_prefix, bool verbose, v1::ContainerStatusResponse* out) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  std::string bundle;
  int pid = 0;
  {
    MutexLock lock(c->mu);
    auto* st = out->mutable_status();
    st->set_id(c->rec.id);
    *st->mutable_metadata() = c->config.metadata();
    st->set_state(static_cast<v1::ContainerState>(c->rec.state));
    st->set_created_at(c->rec.created_at);
    st->set_started_at(c->rec.started_at);
    st->set_finished_at(c->rec.finished_at);
    st->set_exit_code(c->rec.exit_code);
    *st->mutable_image() = c->config.image();
    st->set_image_ref(c->rec.image_ref);
    st->set_image_id(c->rec.image_id);
    st->set_reason(c->rec.reason);
    st->set_message(c->rec.message);
    st->mutable_labels()->insert(c->config.labels().begin(), c->config.labels().end());
    st->mutable_annotations()->insert(c->config.annotations().begin(), c->config.annotations().end());
    *st->mutable_mounts() = c->config.mounts();
    st->set_log_path(c->rec.log_path);
    *st->mutable_resources()->mutable_linux() = c->config.linux().resources();
    auto* user = st->mutable_user()->mutable_linux();
    user->set_uid(c->rec.uid);
    user->set_gid(c->rec.gid);
    for (auto g : c->rec.additional_gids) user->add_supplemental_groups(g);
    v1::Signal sig;
    if (v1::Signal_Parse(stop_signal_name(c->stop_signal), &sig)) st->set_stop_signal(sig);
    bundle = c->bundle;
    pid = c->rec.state == v1::CONTAINER_RUNNING ? c->rec.pid : 0;
  }
  if (verbose) {
    nlohmann::json info = {
        {"pid", pid}, {"sandboxID", c->sandbox_id}, {"bundle", bundle}, {"cgroupsPath", c->cgroups_path}};
    if (auto spec = oci::read_spec_file(bundle + "/config.json"); spec.ok()) info["runtimeSpec"] = oci::to_json(*spec);
    (*out->mutable_info())["info"] = info.dump();
  }
  return ok_status();
}

std::vector<v1::Container> ContainerManager::list(const v1::ContainerFilter& f) {
  std::vector<std::shared_ptr<Container>> all;
  {
    MutexLock lock(impl_->mu);
    all.reserve(impl_->containers.size());
    for (const auto& [id, c] : impl_->containers)
      if (f.id().empty() || id.rfind(f.id(), 0) == 0) all.push_back(c);
  }
  std::vector<v1::Container> out;
  out.reserve(all.size());
  for (const auto& c : all) {
    MutexLock lock(c->mu);
    if (!f.pod_sandbox_id().empty() && c->rec.sandbox_id.rfind(f.pod_sandbox_id(), 0) != 0) continue;
    if (f.has_state() && f.state().state() != c->rec.state) continue;
    if (!labels_match(c->config, f.label_selector())) continue;
    v1::Container& x = out.emplace_back();
    x.set_id(c->rec.id);
    x.set_pod_sandbox_id(c->rec.sandbox_id);
    *x.mutable_metadata() = c->config.metadata();
    *x.mutable_image() = c->config.image();
    x.set_image_ref(c->rec.image_ref);
    x.set_image_id(c->rec.image_id);
    x.set_state(static_cast<v1::ContainerState>(c->rec.state));
    x.set_created_at(c->rec.created_at);
    x.mutable_labels()->insert(c->config.labels().begin(), c->config.labels().end());
    x.mutable_annotations()->insert(c->config.annotations().begin(), c->config.annotations().end());
  }
  return out;
}

static ContainerInfo info_of(const ContainerManager::Impl& impl, const Container& c) {
  MutexLock lock(c.mu);
  ContainerInfo i;
  i.id = c.id;
  i.sandbox_id = c.sandbox_id;
  i.state = static_cast<v1::ContainerState>(c.rec.state);
  i.pid = c.rec.pid;
  i.tty = c.config.tty();
  i.stdin = c.config.stdin();
  i.stdin_once = c.config.stdin_once();
  i.monitor_socket = c.socket;
  auto rt = impl.runtime_for(c.runtime_handler);
  if (rt.ok()) {
    i.runtime_binary = rt->binary();
    i.runtime_root = rt->root();
  }
  i.systemd_cgroup = impl.opt.runtimes.systemd_cgroup();
  i.bundle = c.bundle;
  i.cgroups_path = c.cgroups_path;
  i.upper_dir = c.upper;
  i.log_path = c.rec.log_path;
  i.labels = {c.config.labels().begin(), c.config.labels().end()};
  i.annotations = {c.config.annotations().begin(), c.config.annotations().end()};
  i.image = c.config.image().image();
  i.metadata = c.config.metadata();
  i.created_at = c.rec.created_at;
  return i;
}

std::optional<ContainerInfo> ContainerManager::info(const std::string& id_or_prefix) {
  auto c = impl_->find(id_or_prefix, nullptr);
  if (!c) return std::nullopt;
  return info_of(*impl_, *c);
}

Result<ContainerInfo> ContainerManager::lookup(const std::string& id_or_prefix) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  return info_of(*impl_, *c);
}

static ContainerStatsSource stats_source_of(const Container& c) {
  MutexLock lock(c.mu);
  ContainerStatsSource s;
  s.attributes.set_id(c.id);
  *s.attributes.mutable_metadata() = c.config.metadata();
  *s.attributes.mutable_labels() = c.config.labels();
  *s.attributes.mutable_annotations() = c.config.annotations();
  s.sandbox_id = c.sandbox_id;
  s.cgroups_path = c.cgroups_path;
  s.upper_dir = c.upper;
  s.image = c.config.image().image();
  s.state = static_cast<v1::ContainerState>(c.rec.state);
  return s;
}

std::vector<ContainerStatsSource> ContainerManager::stats_sources() {
  std::vector<std::shared_ptr<Container>> all;
  {
    MutexLock lock(impl_->mu);
    all.reserve(impl_->containers.size());
    for (const auto& [id, c] : impl_->containers) all.push_back(c);
  }
  std::vector<ContainerStatsSource> out;
  out.reserve(all.size());
  for (const auto& c : all) out.push_back(stats_source_of(*c));
  return out;
}

Result<ContainerStatsSource> ContainerManager::stats_source(const std::string& id_or_prefix) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  return stats_source_of(*c);
}

size_t ContainerManager::running_count() {
  MutexLock lock(impl_->mu);
  size_t n = 0;
  for (const auto& [id, c] : impl_->containers) n += c->state() == v1::CONTAINER_RUNNING;
  return n;
}

}  // namespace berth
