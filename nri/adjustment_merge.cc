// See nri_adjustment.h. The owners are claimed on a copy and kept only when the whole adjustment
// is taken, so a refused plugin leaves nothing behind.
#include <algorithm>
#include <functional>

#include "berth/nri_adjustment.h"

namespace berth::nri {

namespace {

class Claims {
 public:
  Claims(std::map<std::string, std::string>& owners, const std::string& plugin, std::string prefix = "")
      : owners_(owners), plugin_(plugin), prefix_(std::move(prefix)) {}

  Status claim(const std::string& field) {
    auto [it, fresh] = owners_.emplace(prefix_ + field, plugin_);
    if (fresh || it->second == plugin_) return ok_status();
    return failed_precondition("nri: plugins \"" + it->second + "\" and \"" + plugin_ + "\" both tried to set " +
                               prefix_ + field);
  }

 private:
  std::map<std::string, std::string>& owners_;
  const std::string& plugin_;
  std::string prefix_;
};

// A key "-name" marks the removal of name.
std::string_view target_of(const std::string& key) {
  return !key.empty() && key[0] == '-' ? std::string_view(key).substr(1) : std::string_view(key);
}
bool removes(const std::string& key) { return !key.empty() && key[0] == '-'; }

// Sets (or removes) the element of `list` whose key is `key`.
template <typename List, typename Item, typename KeyOf>
void put_keyed(List& list, const Item& item, const std::string& key, KeyOf key_of) {
  auto target = target_of(key);
  for (int i = 0; i < list.size(); ++i)
    if (key_of(list.Get(i)) == target) {
      if (removes(key))
        list.DeleteSubrange(i, 1);
      else
        *list.Mutable(i) = item;
      return;
    }
  if (!removes(key)) *list.Add() = item;
}

// In the merged adjustment a removal is kept as the plugin wrote it: applying it removes the
// container's own element.
template <typename List, typename Item, typename KeyOf>
void put_merged(List& list, const Item& item, const std::string& key, KeyOf key_of) {
  for (int i = 0; i < list.size(); ++i)
    if (target_of(std::string(key_of(list.Get(i)))) == target_of(key)) {
      *list.Mutable(i) = item;
      return;
    }
  *list.Add() = item;
}

std::string env_name(const std::string& kv) { return kv.substr(0, kv.find('=')); }

// Claims `field` when the plugin set it, then copies it. The copy is a callable: calling a
// submessage's mutable_ accessor marks it present, so none is called for what was not set.
template <typename Set>
Status claim_set(Claims& c, bool has, const char* field, Set set) {
  if (!has) return ok_status();
  if (Status s = c.claim(field); !s.ok()) return s;
  set();
  return ok_status();
}

Status merge_resources_claimed(Claims& c, const api::LinuxResources& from, api::LinuxResources& into) {
  const auto& m = from.memory();
  const auto& cpu = from.cpu();
  for (auto s :
       {claim_set(c, m.has_limit(), "memory limit", [&] { *into.mutable_memory()->mutable_limit() = m.limit(); }),
        claim_set(c, m.has_reservation(), "memory reservation",
                  [&] { *into.mutable_memory()->mutable_reservation() = m.reservation(); }),
        claim_set(c, m.has_swap(), "memory swap limit", [&] { *into.mutable_memory()->mutable_swap() = m.swap(); }),
        claim_set(c, m.has_kernel(), "memory kernel limit",
                  [&] { *into.mutable_memory()->mutable_kernel() = m.kernel(); }),
        claim_set(c, m.has_kernel_tcp(), "memory kernel TCP limit",
                  [&] { *into.mutable_memory()->mutable_kernel_tcp() = m.kernel_tcp(); }),
        claim_set(c, m.has_swappiness(), "memory swappiness",
                  [&] { *into.mutable_memory()->mutable_swappiness() = m.swappiness(); }),
        claim_set(c, m.has_disable_oom_killer(), "memory disable OOM killer",
                  [&] { *into.mutable_memory()->mutable_disable_oom_killer() = m.disable_oom_killer(); }),
        claim_set(c, m.has_use_hierarchy(), "memory use hierarchy",
                  [&] { *into.mutable_memory()->mutable_use_hierarchy() = m.use_hierarchy(); }),
        claim_set(c, cpu.has_shares(), "CPU shares", [&] { *into.mutable_cpu()->mutable_shares() = cpu.shares(); }),
        claim_set(c, cpu.has_quota(), "CPU quota", [&] { *into.mutable_cpu()->mutable_quota() = cpu.quota(); }),
        claim_set(c, cpu.has_period(), "CPU period", [&] { *into.mutable_cpu()->mutable_period() = cpu.period(); }),
        claim_set(c, cpu.has_realtime_runtime(), "CPU realtime runtime",
                  [&] { *into.mutable_cpu()->mutable_realtime_runtime() = cpu.realtime_runtime(); }),
        claim_set(c, cpu.has_realtime_period(), "CPU realtime period",
                  [&] { *into.mutable_cpu()->mutable_realtime_period() = cpu.realtime_period(); }),
        claim_set(c, !cpu.cpus().empty(), "CPU set cpus", [&] { into.mutable_cpu()->set_cpus(cpu.cpus()); }),
        claim_set(c, !cpu.mems().empty(), "CPU set mems", [&] { into.mutable_cpu()->set_mems(cpu.mems()); }),
        claim_set(c, from.has_blockio_class(), "block I/O class",
                  [&] { *into.mutable_blockio_class() = from.blockio_class(); }),
        claim_set(c, from.has_rdt_class(), "RDT class", [&] { *into.mutable_rdt_class() = from.rdt_class(); }),
        claim_set(c, from.has_pids(), "pids limit", [&] { *into.mutable_pids() = from.pids(); })})
    if (!s.ok()) return s;
  for (const auto& h : from.hugepage_limits()) {
    if (Status s = c.claim("hugepage limit " + h.page_size()); !s.ok()) return s;
    put_merged(*into.mutable_hugepage_limits(), h, h.page_size(),
               [](const api::HugepageLimit& x) { return x.page_size(); });
  }
  for (const auto& [k, v] : from.unified()) {
    if (Status s = c.claim("unified resource " + k); !s.ok()) return s;
    (*into.mutable_unified())[k] = v;
  }
  // Device cgroup rules are added to, never owned (as OCI hooks).
  for (const auto& d : from.devices()) *into.add_devices() = d;
  return ok_status();
}

// The owners' names above, as the API's fields; keyed ones end with a space and take the key.
struct FieldName {
  const char* name;
  api::Field field;
};
constexpr FieldName kFieldNames[] = {
    {"annotation ", api::Annotations},
    {"mount ", api::Mounts},
    {"environment variable ", api::Env},
    {"rlimit ", api::Rlimits},
    {"CDI device ", api::CdiDevices},
    {"device ", api::Devices},
    {"hugepage limit ", api::HugepageLimits},
    {"unified resource ", api::CgroupsUnified},
    {"namespace ", api::Namespace},
    {"sysctl ", api::Sysctl},
    {"network device ", api::LinuxNetDevices},
    {"args", api::Args},
    {"memory limit", api::MemLimit},
    {"memory reservation", api::MemReservation},
    {"memory swap limit", api::MemSwapLimit},
    {"memory kernel limit", api::MemKernelLimit},
    {"memory kernel TCP limit", api::MemTCPLimit},
    {"memory swappiness", api::MemSwappiness},
    {"memory disable OOM killer", api::MemDisableOomKiller},
    {"memory use hierarchy", api::MemUseHierarchy},
    {"CPU shares", api::CPUShares},
    {"CPU quota", api::CPUQuota},
    {"CPU period", api::CPUPeriod},
    {"CPU realtime runtime", api::CPURealtimeRuntime},
    {"CPU realtime period", api::CPURealtimePeriod},
    {"CPU set cpus", api::CPUSetCPUs},
    {"CPU set mems", api::CPUSetMems},
    {"pids limit", api::PidsLimit},
    {"block I/O class", api::BlockioClass},
    {"RDT class", api::RdtClass},
    {"cgroups path", api::CgroupsPath},
    {"OOM score adjustment", api::OomScoreAdj},
    {"I/O priority", api::IoPriority},
    {"seccomp policy", api::SeccompPolicy},
    {"scheduler", api::LinuxSched},
    {"RDT", api::RdtClosID},
    {"memory policy", api::MemoryPolicy},
};

}  // namespace

api::OwningPlugins owning_plugins(const std::string& container_id, const std::map<std::string, std::string>& owners) {
  api::OwningPlugins out;
  auto& fields = (*out.mutable_owners())[container_id];
  for (const auto& [name, plugin] : owners)
    for (const auto& f : kFieldNames) {
      const std::string_view n(f.name);
      if (n.back() == ' ' && name.rfind(n, 0) == 0) {
        (*(*fields.mutable_compound())[f.field].mutable_owners())[name.substr(n.size())] = plugin;
        break;
      }
      if (name == n) {
        (*fields.mutable_simple())[f.field] = plugin;
        break;
      }
    }
  return out;
}

Status merge_resources(const std::string& plugin, const std::string& container_id, const api::LinuxResources& from,
                       api::LinuxResources& into, std::map<std::string, std::string>& owners) {
  auto claimed = owners;
  api::LinuxResources out = into;
  Claims c(claimed, plugin, "container " + container_id + ": ");
  if (Status s = merge_resources_claimed(c, from, out); !s.ok()) return s;
  owners = std::move(claimed);
  into = std::move(out);
  return ok_status();
}

Status AdjustmentMerger::add(const std::string& plugin, const api::ContainerAdjustment& a) {
  auto owners = owners_;
  api::Container container = container_;
  api::ContainerAdjustment merged = merged_;
  Claims c(owners, plugin);

  for (const auto& [k, v] : a.annotations()) {
    if (Status s = c.claim("annotation " + std::string(target_of(k))); !s.ok()) return s;
    (*merged.mutable_annotations())[k] = v;
    if (removes(k))
      container.mutable_annotations()->erase(std::string(target_of(k)));
    else
      (*container.mutable_annotations())[k] = v;
  }
  auto mount_key = [](const api::Mount& m) { return m.destination(); };
  for (const auto& m : a.mounts()) {
    if (Status s = c.claim("mount " + std::string(target_of(m.destination()))); !s.ok()) return s;
    put_merged(*merged.mutable_mounts(), m, m.destination(), mount_key);
    put_keyed(*container.mutable_mounts(), m, m.destination(), mount_key);
  }
  for (const auto& e : a.env()) {
    if (Status s = c.claim("environment variable " + std::string(target_of(e.key()))); !s.ok()) return s;
    put_merged(*merged.mutable_env(), e, e.key(), [](const api::KeyValue& x) { return x.key(); });
    put_keyed(*container.mutable_env(), e.key() + "=" + e.value(), e.key(), env_name);
  }
  // OCI hooks are only ever added: no owner, no conflict.
  auto add_hooks = [](const api::Hooks& from, api::Hooks& into) {
    into.mutable_prestart()->MergeFrom(from.prestart());
    into.mutable_create_runtime()->MergeFrom(from.create_runtime());
    into.mutable_create_container()->MergeFrom(from.create_container());
    into.mutable_start_container()->MergeFrom(from.start_container());
    into.mutable_poststart()->MergeFrom(from.poststart());
    into.mutable_poststop()->MergeFrom(from.poststop());
  };
  if (a.has_hooks()) {
    add_hooks(a.hooks(), *merged.mutable_hooks());
    add_hooks(a.hooks(), *container.mutable_hooks());
  }
  for (const auto& r : a.rlimits()) {
    if (Status s = c.claim("rlimit " + r.type()); !s.ok()) return s;
    auto key = [](const api::POSIXRlimit& x) { return x.type(); };
    put_merged(*merged.mutable_rlimits(), r, r.type(), key);
    put_keyed(*container.mutable_rlimits(), r, r.type(), key);
  }
  for (const auto& d : a.cdi_devices()) {
    if (Status s = c.claim("CDI device " + d.name()); !s.ok()) return s;
    *merged.add_cdi_devices() = d;
    *container.add_cdi_devices() = d;
  }
  if (a.args_size() > 0) {
    if (Status s = c.claim("args"); !s.ok()) return s;
    *merged.mutable_args() = a.args();
    *container.mutable_args() = a.args();
  }
  if (a.has_linux()) {
    const auto& l = a.linux();
    auto* ml = merged.mutable_linux();
    auto* cl = container.mutable_linux();
    auto device_key = [](const api::LinuxDevice& d) { return d.path(); };
    for (const auto& d : l.devices()) {
      if (Status s = c.claim("device " + std::string(target_of(d.path()))); !s.ok()) return s;
      put_merged(*ml->mutable_devices(), d, d.path(), device_key);
      put_keyed(*cl->mutable_devices(), d, d.path(), device_key);
    }
    if (l.has_resources()) {
      if (Status s = merge_resources_claimed(c, l.resources(), *ml->mutable_resources()); !s.ok()) return s;
      Claims again(owners, plugin);  // already claimed by this plugin: applies the same values
      (void)merge_resources_claimed(again, l.resources(), *cl->mutable_resources());
    }
    for (auto s :
         {claim_set(c, !l.cgroups_path().empty(), "cgroups path", [&] { ml->set_cgroups_path(l.cgroups_path()); }),
          claim_set(c, l.has_oom_score_adj(), "OOM score adjustment",
                    [&] { *ml->mutable_oom_score_adj() = l.oom_score_adj(); }),
          claim_set(c, l.has_io_priority(), "I/O priority", [&] { *ml->mutable_io_priority() = l.io_priority(); }),
          claim_set(c, l.has_seccomp_policy(), "seccomp policy",
                    [&] { *ml->mutable_seccomp_policy() = l.seccomp_policy(); }),
          claim_set(c, l.has_scheduler(), "scheduler", [&] { *ml->mutable_scheduler() = l.scheduler(); }),
          claim_set(c, l.has_rdt(), "RDT", [&] { *ml->mutable_rdt() = l.rdt(); }),
          claim_set(c, l.has_memory_policy(), "memory policy",
                    [&] { *ml->mutable_memory_policy() = l.memory_policy(); })})
      if (!s.ok()) return s;
    if (!l.cgroups_path().empty()) cl->set_cgroups_path(l.cgroups_path());
    if (l.has_oom_score_adj()) *cl->mutable_oom_score_adj() = l.oom_score_adj();
    for (const auto& n : l.namespaces()) {
      if (Status s = c.claim("namespace " + std::string(target_of(n.type()))); !s.ok()) return s;
      put_merged(*ml->mutable_namespaces(), n, n.type(), [](const api::LinuxNamespace& x) { return x.type(); });
    }
    for (const auto& [k, v] : l.sysctl()) {
      if (Status s = c.claim("sysctl " + std::string(target_of(k))); !s.ok()) return s;
      (*ml->mutable_sysctl())[k] = v;
    }
    for (const auto& [k, v] : l.net_devices()) {
      if (Status s = c.claim("network device " + std::string(target_of(k))); !s.ok()) return s;
      (*ml->mutable_net_devices())[k] = v;
    }
  }
  owners_ = std::move(owners);
  container_ = std::move(container);
  merged_ = std::move(merged);
  return ok_status();
}

}  // namespace berth::nri
