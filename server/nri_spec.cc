// See nri_spec.h. Fields the OCI spec has but oci::Spec does not model (memory reservation,
// swappiness, pids, realtime CPU, I/O priority, scheduler, RDT, memory policy, network devices)
// go through the structs' `unknown` JSON under the spec's own names.
#include "nri_spec.h"

#include "berth/cdi.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

void fill_hooks(const std::vector<oci::Hook>& from, google::protobuf::RepeatedPtrField<nri_api::Hook>* into) {
  for (const auto& h : from) {
    auto* o = into->Add();
    o->set_path(h.path);
    for (const auto& a : h.args) o->add_args(a);
    for (const auto& e : h.env) o->add_env(e);
    if (h.timeout) o->mutable_timeout()->set_value(*h.timeout);
  }
}

const std::vector<oci::Hook>& hooks_of(const oci::Spec& spec, const char* name) {
  static const std::vector<oci::Hook> none;
  auto it = spec.hooks.find(name);
  return it == spec.hooks.end() ? none : it->second;
}

void add_hooks(const google::protobuf::RepeatedPtrField<nri_api::Hook>& from, std::vector<oci::Hook>& into) {
  for (const auto& h : from) {
    oci::Hook o;
    o.path = h.path();
    o.args.assign(h.args().begin(), h.args().end());
    o.env.assign(h.env().begin(), h.env().end());
    if (h.has_timeout()) o.timeout = h.timeout().value();
    into.push_back(std::move(o));
  }
}

// "-key": the removal of key.
bool removal(const std::string& key) { return !key.empty() && key[0] == '-'; }
std::string target(const std::string& key) { return removal(key) ? key.substr(1) : key; }

Status apply_resources(const nri_api::LinuxResources& r, oci::Resources& o) {
  if (r.has_blockio_class()) return invalid_argument("linux.resources.blockio_class: berth has no block I/O classes");
  if (r.has_rdt_class()) return invalid_argument("linux.resources.rdt_class: berth has no RDT classes");
  if (r.has_memory()) {
    const auto& m = r.memory();
    auto& om = o.memory ? *o.memory : o.memory.emplace();
    if (m.has_limit()) om.limit = m.limit().value();
    if (m.has_swap()) om.swap = m.swap().value();
    if (m.has_reservation()) om.unknown["reservation"] = m.reservation().value();
    if (m.has_kernel()) om.unknown["kernel"] = m.kernel().value();
    if (m.has_kernel_tcp()) om.unknown["kernelTCP"] = m.kernel_tcp().value();
    if (m.has_swappiness()) om.unknown["swappiness"] = m.swappiness().value();
    if (m.has_disable_oom_killer()) om.unknown["disableOOMKiller"] = m.disable_oom_killer().value();
    if (m.has_use_hierarchy()) om.unknown["useHierarchy"] = m.use_hierarchy().value();
  }
  if (r.has_cpu()) {
    const auto& c = r.cpu();
    auto& oc = o.cpu ? *o.cpu : o.cpu.emplace();
    if (c.has_shares()) oc.shares = c.shares().value();
    if (c.has_quota()) oc.quota = c.quota().value();
    if (c.has_period()) oc.period = c.period().value();
    if (c.has_realtime_runtime()) oc.unknown["realtimeRuntime"] = c.realtime_runtime().value();
    if (c.has_realtime_period()) oc.unknown["realtimePeriod"] = c.realtime_period().value();
    if (!c.cpus().empty()) oc.cpus = c.cpus();
    if (!c.mems().empty()) oc.mems = c.mems();
  }
  for (const auto& h : r.hugepage_limits()) {
    auto it = std::find_if(o.hugepage_limits.begin(), o.hugepage_limits.end(),
                           [&](const oci::HugepageLimit& x) { return x.page_size == h.page_size(); });
    if (it == o.hugepage_limits.end()) it = o.hugepage_limits.insert(o.hugepage_limits.end(), {h.page_size(), 0, {}});
    it->limit = h.limit();
  }
  for (const auto& [k, v] : r.unified()) o.unified[k] = v;
  for (const auto& d : r.devices()) {
    oci::DeviceRule rule{d.allow(), d.type(), std::nullopt, std::nullopt, d.access(), nlohmann::json::object()};
    if (d.has_major()) rule.major = d.major().value();
    if (d.has_minor()) rule.minor = d.minor().value();
    o.devices.push_back(std::move(rule));
  }
  if (r.has_pids()) o.unknown["pids"] = {{"limit", r.pids().limit()}};
  return ok_status();
}

// The OCI spec's linux.seccomp for a plugin's policy; berth's seccomp compiler checks it as it
// checks a Localhost profile.
nlohmann::json oci_seccomp(const nri_api::LinuxSeccomp& p) {
  nlohmann::json j = {{"defaultAction", p.default_action()}};
  if (p.has_default_errno()) j["defaultErrnoRet"] = p.default_errno().value();
  if (p.architectures_size() > 0)
    j["architectures"] = std::vector<std::string>(p.architectures().begin(), p.architectures().end());
  if (p.flags_size() > 0) j["flags"] = std::vector<std::string>(p.flags().begin(), p.flags().end());
  if (!p.listener_path().empty()) j["listenerPath"] = p.listener_path();
  if (!p.listener_metadata().empty()) j["listenerMetadata"] = p.listener_metadata();
  nlohmann::json syscalls = nlohmann::json::array();
  for (const auto& s : p.syscalls()) {
    nlohmann::json o = {{"names", std::vector<std::string>(s.names().begin(), s.names().end())},
                        {"action", s.action()}};
    if (s.has_errno_ret()) o["errnoRet"] = s.errno_ret().value();
    for (const auto& a : s.args())
      o["args"].push_back({{"index", a.index()}, {"value", a.value()}, {"valueTwo", a.value_two()}, {"op", a.op()}});
    syscalls.push_back(std::move(o));
  }
  j["syscalls"] = std::move(syscalls);
  return j;
}

// The CRI's and NRI's resources name these alike.
template <typename From, typename To>
void copy_hugepages_and_unified(const From& from, To& to) {
  for (const auto& h : from.hugepage_limits()) {
    auto* o = to.add_hugepage_limits();
    o->set_page_size(h.page_size());
    o->set_limit(h.limit());
  }
  for (const auto& [k, v] : from.unified()) (*to.mutable_unified())[k] = v;
}

}  // namespace

void fill_nri_container(const oci::Spec& spec, nri_api::Container& out) {
  if (spec.process) {
    for (const auto& a : spec.process->args) out.add_args(a);
    for (const auto& e : spec.process->env) out.add_env(e);
    for (const auto& r : spec.process->rlimits) {
      auto* o = out.add_rlimits();
      o->set_type(r.type);
      o->set_hard(r.hard);
      o->set_soft(r.soft);
    }
  }
  for (const auto& m : spec.mounts) {
    auto* o = out.add_mounts();
    o->set_destination(m.destination);
    o->set_type(m.type);
    o->set_source(m.source);
    for (const auto& opt : m.options) o->add_options(opt);
  }
  auto* hooks = out.mutable_hooks();
  fill_hooks(hooks_of(spec, "prestart"), hooks->mutable_prestart());
  fill_hooks(hooks_of(spec, "createRuntime"), hooks->mutable_create_runtime());
  fill_hooks(hooks_of(spec, "createContainer"), hooks->mutable_create_container());
  fill_hooks(hooks_of(spec, "startContainer"), hooks->mutable_start_container());
  fill_hooks(hooks_of(spec, "poststart"), hooks->mutable_poststart());
  fill_hooks(hooks_of(spec, "poststop"), hooks->mutable_poststop());
  if (!spec.linux) return;
  auto* l = out.mutable_linux();
  for (const auto& n : spec.linux->namespaces) {
    auto* o = l->add_namespaces();
    o->set_type(n.type);
    o->set_path(n.path);
  }
  for (const auto& d : spec.linux->devices) {
    auto* o = l->add_devices();
    o->set_path(d.path);
    o->set_type(d.type);
    o->set_major(d.major);
    o->set_minor(d.minor);
    if (d.file_mode) o->mutable_file_mode()->set_value(*d.file_mode);
    if (d.uid) o->mutable_uid()->set_value(*d.uid);
    if (d.gid) o->mutable_gid()->set_value(*d.gid);
  }
  if (spec.linux->resources) *l->mutable_resources() = nri_resources(*spec.linux->resources);
  l->set_cgroups_path(spec.linux->cgroups_path);
  if (spec.process && spec.process->oom_score_adj) l->mutable_oom_score_adj()->set_value(*spec.process->oom_score_adj);
  for (const auto& [k, v] : spec.linux->sysctl) (*l->mutable_sysctl())[k] = v;
}

nri_api::LinuxResources nri_resources(const oci::Resources& r) {
  nri_api::LinuxResources out;
  if (r.memory) {
    auto* m = out.mutable_memory();
    if (r.memory->limit) m->mutable_limit()->set_value(*r.memory->limit);
    if (r.memory->swap) m->mutable_swap()->set_value(*r.memory->swap);
  }
  if (r.cpu) {
    auto* c = out.mutable_cpu();
    if (r.cpu->shares) c->mutable_shares()->set_value(*r.cpu->shares);
    if (r.cpu->quota) c->mutable_quota()->set_value(*r.cpu->quota);
    if (r.cpu->period) c->mutable_period()->set_value(*r.cpu->period);
    c->set_cpus(r.cpu->cpus);
    c->set_mems(r.cpu->mems);
  }
  for (const auto& h : r.hugepage_limits) {
    auto* o = out.add_hugepage_limits();
    o->set_page_size(h.page_size);
    o->set_limit(h.limit);
  }
  for (const auto& [k, v] : r.unified) (*out.mutable_unified())[k] = v;
  for (const auto& d : r.devices) {
    auto* o = out.add_devices();
    o->set_allow(d.allow);
    o->set_type(d.type);
    if (d.major) o->mutable_major()->set_value(*d.major);
    if (d.minor) o->mutable_minor()->set_value(*d.minor);
    o->set_access(d.access);
  }
  return out;
}

nri_api::LinuxResources nri_resources(const v1::LinuxContainerResources& r) {
  nri_api::LinuxResources out;
  if (r.memory_limit_in_bytes()) out.mutable_memory()->mutable_limit()->set_value(r.memory_limit_in_bytes());
  if (r.memory_swap_limit_in_bytes()) out.mutable_memory()->mutable_swap()->set_value(r.memory_swap_limit_in_bytes());
  auto* c = out.mutable_cpu();
  if (r.cpu_shares()) c->mutable_shares()->set_value(static_cast<uint64_t>(r.cpu_shares()));
  if (r.cpu_quota()) c->mutable_quota()->set_value(r.cpu_quota());
  if (r.cpu_period()) c->mutable_period()->set_value(static_cast<uint64_t>(r.cpu_period()));
  c->set_cpus(r.cpuset_cpus());
  c->set_mems(r.cpuset_mems());
  copy_hugepages_and_unified(r, out);
  return out;
}

v1::LinuxContainerResources cri_resources(const nri_api::LinuxResources& r) {
  v1::LinuxContainerResources out;
  if (r.memory().has_limit()) out.set_memory_limit_in_bytes(r.memory().limit().value());
  if (r.memory().has_swap()) out.set_memory_swap_limit_in_bytes(r.memory().swap().value());
  if (r.cpu().has_shares()) out.set_cpu_shares(static_cast<int64_t>(r.cpu().shares().value()));
  if (r.cpu().has_quota()) out.set_cpu_quota(r.cpu().quota().value());
  if (r.cpu().has_period()) out.set_cpu_period(static_cast<int64_t>(r.cpu().period().value()));
  out.set_cpuset_cpus(r.cpu().cpus());
  out.set_cpuset_mems(r.cpu().mems());
  copy_hugepages_and_unified(r, out);
  return out;
}

Status apply_nri_adjustment(const nri_api::ContainerAdjustment& a, CdiRegistry* cdi, oci::Spec& spec) {
  for (const auto& [k, v] : a.annotations()) {
    if (removal(k))
      spec.annotations.erase(target(k));
    else
      spec.annotations[k] = v;
  }
  for (const auto& m : a.mounts()) {
    const std::string dest = target(m.destination());
    std::erase_if(spec.mounts, [&](const oci::Mount& x) { return x.destination == dest; });
    if (removal(m.destination())) continue;
    if (dest.empty() || dest[0] != '/') return invalid_argument("mounts: destination \"" + dest + "\" is not absolute");
    oci::Mount o;
    o.destination = dest;
    o.type = m.type();
    o.source = m.source();
    o.options.assign(m.options().begin(), m.options().end());
    spec.mounts.push_back(std::move(o));
  }
  auto& process = spec.process ? *spec.process : spec.process.emplace();
  for (const auto& e : a.env()) {
    const std::string name = target(e.key());
    std::erase_if(process.env, [&](const std::string& kv) { return kv.substr(0, kv.find('=')) == name; });
    if (!removal(e.key())) process.env.push_back(name + "=" + e.value());
  }
  if (a.args_size() > 0) process.args.assign(a.args().begin(), a.args().end());
  for (const auto& r : a.rlimits()) {
    std::erase_if(process.rlimits, [&](const oci::Rlimit& x) { return x.type == r.type(); });
    process.rlimits.push_back({r.type(), r.hard(), r.soft(), nlohmann::json::object()});
  }
  if (a.has_hooks()) {
    const auto& h = a.hooks();
    add_hooks(h.prestart(), spec.hooks["prestart"]);
    add_hooks(h.create_runtime(), spec.hooks["createRuntime"]);
    add_hooks(h.create_container(), spec.hooks["createContainer"]);
    add_hooks(h.start_container(), spec.hooks["startContainer"]);
    add_hooks(h.poststart(), spec.hooks["poststart"]);
    add_hooks(h.poststop(), spec.hooks["poststop"]);
    std::erase_if(spec.hooks, [](const auto& kv) { return kv.second.empty(); });
  }
  if (a.cdi_devices_size() > 0) {
    if (!cdi) return invalid_argument("CDI_devices: CDI is not configured in this berthd");
    std::vector<std::string> names;
    for (const auto& d : a.cdi_devices()) names.push_back(d.name());
    auto edits = cdi->resolve(names);
    if (!edits.ok()) return edits.status().context("CDI_devices");
    if (Status s = apply_cdi_edits(spec, *edits); !s.ok()) return s.context("CDI_devices");
  }
  if (!a.has_linux()) return ok_status();
  const auto& l = a.linux();
  if (l.namespaces_size() > 0) return invalid_argument("linux.namespaces: a container's namespaces are its pod's");
  if (l.has_seccomp_policy())
    (spec.linux ? *spec.linux : spec.linux.emplace()).seccomp = oci_seccomp(l.seccomp_policy());
  auto& linux = spec.linux ? *spec.linux : spec.linux.emplace();
  for (const auto& d : l.devices()) {
    const std::string path = target(d.path());
    std::erase_if(linux.devices, [&](const oci::Device& x) { return x.path == path; });
    if (removal(d.path())) continue;
    if (d.type() != "c" && d.type() != "b" && d.type() != "p" && d.type() != "u")
      return invalid_argument("linux.devices: " + path + ": type \"" + d.type() + "\" is not c, b, u or p");
    oci::Device o{d.type(),     path,         d.major(),    d.minor(),
                  std::nullopt, std::nullopt, std::nullopt, nlohmann::json::object()};
    if (d.has_file_mode()) o.file_mode = d.file_mode().value();
    if (d.has_uid()) o.uid = d.uid().value();
    if (d.has_gid()) o.gid = d.gid().value();
    linux.devices.push_back(std::move(o));
    // The device is usable in the container only where its cgroup allows it.
    auto& res = linux.resources ? *linux.resources : linux.resources.emplace();
    res.devices.push_back({true, d.type(), d.major(), d.minor(), "rwm", nlohmann::json::object()});
  }
  if (l.has_resources()) {
    auto& res = linux.resources ? *linux.resources : linux.resources.emplace();
    if (Status s = apply_resources(l.resources(), res); !s.ok()) return s;
  }
  if (!l.cgroups_path().empty()) linux.cgroups_path = l.cgroups_path();
  if (l.has_oom_score_adj()) process.oom_score_adj = static_cast<int>(l.oom_score_adj().value());
  for (const auto& [k, v] : l.sysctl()) {
    if (removal(k))
      linux.sysctl.erase(target(k));
    else
      linux.sysctl[k] = v;
  }
  if (l.has_io_priority()) {
    const std::string cls = nri_api::IOPrioClass_Name(l.io_priority().class_());
    process.unknown["ioPriority"] = {{"class", cls.substr(4)}, {"priority", l.io_priority().priority()}};
  }
  if (l.has_scheduler()) return invalid_argument("linux.scheduler: berth does not apply a plugin's scheduler");
  if (l.has_rdt()) return invalid_argument("linux.rdt: berth does not apply a plugin's RDT settings");
  if (l.has_memory_policy())
    return invalid_argument("linux.memory_policy: berth does not apply a plugin's memory policy");
  if (l.net_devices_size() > 0) return invalid_argument("linux.net_devices: berth does not move network devices");
  return ok_status();
}

}  // namespace berth
