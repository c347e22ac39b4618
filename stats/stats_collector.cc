// Container and pod stats and cAdvisor metrics; see stats_collector.h. A pod's cgroup is the
// parent of its pause's cgroup when the pod has its own parent (kubelet's pod cgroup); pods
// sharing berth's default parent are summed from their pause and containers instead.
#include "berth/stats_collector.h"
#include "berth/wall_clock.h"

#include <filesystem>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "berth/cadvisor_metrics.h"
#include "berth/cgroup_stats.h"
#include "berth/cgroups_path.h"
#include "berth/container_manager.h"
#include "berth/cpu_rate.h"
#include "berth/cri_pressure.h"
#include "berth/disk_usage_cache.h"
#include "berth/refreshed_cache.h"
#include "berth/net_dev.h"
#include "berth/sandbox_manager.h"
#include "text_fields.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

template <class L, class M>
bool labels_match(const L& labels, const M& selector) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

void add(CgroupSample& sum, const CgroupSample& s) {
  sum.timestamp_ns = std::max(sum.timestamp_ns, s.timestamp_ns);
  sum.monotonic_ns = std::max(sum.monotonic_ns, s.monotonic_ns);
  sum.cpu_timestamp_ns = std::max(sum.cpu_timestamp_ns, s.cpu_timestamp_ns);
  sum.cpu_monotonic_ns = std::max(sum.cpu_monotonic_ns, s.cpu_monotonic_ns);
  sum.cpu_usage_ns += s.cpu_usage_ns;
  sum.memory_usage_bytes += s.memory_usage_bytes;
  sum.memory_working_set_bytes += s.memory_working_set_bytes;
  sum.memory_rss_bytes += s.memory_rss_bytes;
  sum.page_faults += s.page_faults;
  sum.major_page_faults += s.major_page_faults;
  if (s.pids_current) sum.pids_current = sum.pids_current.value_or(0) + *s.pids_current;
  if (s.io) {
    using text_fields::saturating_add;
    IoCounters& io = sum.io.emplace(sum.io.value_or(IoCounters{}));
    io.read_bytes = saturating_add(io.read_bytes, s.io->read_bytes);
    io.write_bytes = saturating_add(io.write_bytes, s.io->write_bytes);
    io.reads = saturating_add(io.reads, s.io->reads);
    io.writes = saturating_add(io.writes, s.io->writes);
  }
  // PSI is not summed: two containers stalled at the same moment are one stalled second of the
  // pod's, and averages do not add. A pod without a cgroup of its own reports none.
}

std::string parent_dir(const std::string& dir) {
  size_t slash = dir.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : dir.substr(0, slash);
}

}  // namespace

struct StatsCollector::Impl {
  Impl(ContainerManager& c, SandboxManager& s, DiskUsageCache& u, bool sd, std::string mountpoint,
       std::chrono::milliseconds period)
      : containers(c),
        sandboxes(s),
        usage(u),
        systemd(sd),
        layers_mountpoint(std::move(mountpoint)),
        sampled_in_background(period.count() > 0),
        samples({.refresh_interval = period, .thread_name = "cgroup samples"},
                [this](const std::string& dir) {
                  return read_cgroup_sample({dir, "/sys/fs/cgroup", layout});
                }),
        net({.refresh_interval = period, .thread_name = "pod net stats"},
            [](const std::string& key) -> Result<NetSample> {
              int64_t at = wall_clock_ns();
              auto ifs = read_net_dev(std::stoi(key.substr(key.rfind('/') + 1)));
              if (!ifs.ok()) return ifs.status();
              return NetSample{at, std::move(*ifs)};
            }) {}

  ContainerManager& containers;
  SandboxManager& sandboxes;
  DiskUsageCache& usage;
  bool systemd;
  std::string layers_mountpoint;
  bool sampled_in_background;
  CgroupLayout layout = detect_cgroup_layout();
  CpuRateTracker container_rates, pod_rates;
  // By cgroup dir: a sample is ~14 cgroup files, some of which (memory.stat) the kernel computes
  // on each read, about 0.2 ms a container; read per call, ListContainerStats took 25 ms and
  // ListPodSandboxStats 48 ms at 110 pods. Refreshed in the background every
  // stats_collection_period_seconds (0: read in each call, as before).
  RefreshedCache<CgroupSample> samples;
  // By "<pod id>/<pause pid>" (a pid reused by another pod is another key): /proc/<pid>/net/dev,
  // about 60 us a pod, sampled the same way.
  struct NetSample {
    int64_t at_ns;
    std::vector<InterfaceCounters> interfaces;
  };
  RefreshedCache<NetSample> net;

  // Rates of removed containers are dropped whenever a listing sees every container there is.
  // (Call before the attributes are moved out.)
  void forget_removed_containers(const std::vector<ContainerStatsSource>& all) {
    std::unordered_set<std::string> live;
    live.reserve(all.size());
    for (const auto& c : all) live.insert(c.attributes.id());
    container_rates.retain(live);
  }

  Result<CgroupSample> sample_of(const std::string& cgroups_path) {
    return fresh_cpu(cgroup_dir_of(cgroups_path, systemd));
  }
  // The background sample of `dir`, with its cpu counter read now: a rate between two calls is
  // then over the time between them, never nothing (the same sample twice: crictl stats' "cpu
  // stat is not updated during sample") nor a rate of the sampler's period. Reading it costs
  // about as much as the sample's lookup; the rest of the sample (memory.stat) stays cached.
  Result<CgroupSample> fresh_cpu(const std::string& dir) {
    auto s = samples.get(dir);
    if (!s.ok() || !sampled_in_background) return s;
    if (auto cpu = read_cgroup_cpu({dir, "/sys/fs/cgroup", layout}); cpu.ok()) {
      s->cpu_usage_ns = cpu->usage_ns;
      s->cpu_timestamp_ns = cpu->timestamp_ns;
      s->cpu_monotonic_ns = cpu->monotonic_ns;
    }
    return s;
  }

  void fill_cpu_memory(const CgroupSample& s, const std::string& id, CpuRateTracker& rates, v1::CpuUsage* cpu,
                       v1::MemoryUsage* mem) {
    cpu->set_timestamp(s.cpu_timestamp_ns);
    cpu->mutable_usage_core_nano_seconds()->set_value(s.cpu_usage_ns);
    if (auto rate = rates.update(id, s.cpu_usage_ns, s.cpu_monotonic_ns))
      cpu->mutable_usage_nano_cores()->set_value(*rate);
    mem->set_timestamp(s.timestamp_ns);
    mem->mutable_working_set_bytes()->set_value(s.memory_working_set_bytes);
    mem->mutable_available_bytes()->set_value(memory_available_bytes(s));
    mem->mutable_usage_bytes()->set_value(s.memory_usage_bytes);
    mem->mutable_rss_bytes()->set_value(s.memory_rss_bytes);
    mem->mutable_page_faults()->set_value(s.page_faults);
    mem->mutable_major_page_faults()->set_value(s.major_page_faults);
    if (s.cpu_pressure) pressure_to_cri(*s.cpu_pressure, cpu->mutable_psi());
    if (s.memory_pressure) pressure_to_cri(*s.memory_pressure, mem->mutable_psi());
  }

  // CRI's IoUsage holds PSI only (the byte counters go to the metrics): set only with IO PSI.
  template <class Stats>
  static void fill_io(const CgroupSample& s, Stats* st) {
    if (!s.io_pressure) return;
    st->mutable_io()->set_timestamp(s.timestamp_ns);
    pressure_to_cri(*s.io_pressure, st->mutable_io()->mutable_psi());
  }

  // with_disk false: no walk of the writable layer (the metrics use none of its figures, and the
  // walk is the costly part of a container's stats). The source's attributes are moved out.
  v1::ContainerStats container_stats(ContainerStatsSource& c, std::optional<CgroupSample>* sample_out = nullptr,
                                     bool with_disk = true) {
    v1::ContainerStats st;
    *st.mutable_attributes() = std::move(c.attributes);
    const std::string& id = st.attributes().id();
    if (c.state == v1::CONTAINER_RUNNING) {
      auto s = sample_of(c.cgroups_path);
      if (s.ok()) {
        fill_cpu_memory(*s, id, container_rates, st.mutable_cpu(), st.mutable_memory());
        fill_io(*s, &st);
        if (s->swap_usage_bytes) {
          auto* swap = st.mutable_swap();
          swap->set_timestamp(s->timestamp_ns);
          swap->mutable_swap_usage_bytes()->set_value(*s->swap_usage_bytes);
          if (s->swap_limit_bytes > 0)
            swap->mutable_swap_available_bytes()->set_value(
                s->swap_limit_bytes > *s->swap_usage_bytes ? s->swap_limit_bytes - *s->swap_usage_bytes : 0);
        }
        if (sample_out) *sample_out = std::move(*s);
      }
    }
    if (!with_disk) return st;
    auto* fs = st.mutable_writable_layer();
    fs->mutable_fs_id()->set_mountpoint(layers_mountpoint);
    if (auto du = usage.get(c.upper_dir); du.ok()) {
      fs->set_timestamp(du->measured_at_ns);
      fs->mutable_used_bytes()->set_value(du->usage.bytes);
      fs->mutable_inodes_used()->set_value(du->usage.inodes);
    } else {
      fs->set_timestamp(wall_clock_ns());
    }
    return st;
  }

  // `containers` are the pod's (their attributes are moved out); `samples`, when given, receives
  // each running container's sample by id (for the metrics).
  v1::PodSandboxStats pod_stats(PodStatsSource& p, const std::vector<ContainerStatsSource*>& containers,
                                bool with_disk = true, std::map<std::string, CgroupSample>* samples = nullptr) {
    v1::PodSandboxStats st;
    *st.mutable_attributes() = std::move(p.attributes);
    const std::string& id = st.attributes().id();
    auto* linux = st.mutable_linux();
    CgroupSample sum;
    bool have = false;
    bool own_parent =
        !p.cgroup_parent.empty() && p.cgroup_parent != "/" && !(systemd && p.cgroup_parent == "system.slice");
    if (own_parent) {
      if (auto s = fresh_cpu(parent_dir(cgroup_dir_of(p.cgroups_path, systemd))); s.ok()) {
        sum = std::move(*s);
        have = true;
      }
    }
    if (!have && p.ready) {
      if (auto s = sample_of(p.cgroups_path); s.ok()) {
        add(sum, *s);
        have = true;
      }
    }
    linux->mutable_containers()->Reserve(static_cast<int>(containers.size()));
    for (ContainerStatsSource* c : containers) {
      std::optional<CgroupSample> cs;
      v1::ContainerStats* added = linux->add_containers();
      *added = container_stats(*c, &cs, with_disk);
      if (!own_parent && cs) {
        add(sum, *cs);
        have = true;
      }
      if (samples && cs) samples->emplace(added->attributes().id(), std::move(*cs));
    }
    if (have) {
      fill_cpu_memory(sum, id, pod_rates, linux->mutable_cpu(), linux->mutable_memory());
      fill_io(sum, linux);
      if (sum.pids_current) {
        linux->mutable_process()->set_timestamp(sum.timestamp_ns);
        linux->mutable_process()->mutable_process_count()->set_value(*sum.pids_current);
      }
    }
    if (!p.host_network && p.ready && p.pid > 0) {
      if (auto sample = net.get(id + "/" + std::to_string(p.pid)); sample.ok()) {
        auto* usage = linux->mutable_network();
        usage->set_timestamp(sample->at_ns);
        for (const auto& i : sample->interfaces) {
          v1::NetworkInterfaceUsage* u = usage->add_interfaces();
          u->set_name(i.name);
          u->mutable_rx_bytes()->set_value(i.rx_bytes);
          u->mutable_rx_errors()->set_value(i.rx_errors);
          u->mutable_tx_bytes()->set_value(i.tx_bytes);
          u->mutable_tx_errors()->set_value(i.tx_errors);
          if (i.name == "eth0") *usage->mutable_default_interface() = *u;
        }
      }
    }
    return st;
  }

  // The containers by their pod's id, pointing into `all`.
  using ContainersByPod = std::unordered_map<std::string_view, std::vector<ContainerStatsSource*>>;
  static ContainersByPod by_pod(std::vector<ContainerStatsSource>& all) {
    ContainersByPod out;
    for (auto& c : all) out[c.sandbox_id].push_back(&c);
    return out;
  }
  static const std::vector<ContainerStatsSource*>& of_pod(const ContainersByPod& by_pod, const PodStatsSource& p) {
    static const std::vector<ContainerStatsSource*> none;
    auto it = by_pod.find(p.attributes.id());
    return it == by_pod.end() ? none : it->second;
  }
};

StatsCollector::StatsCollector(ContainerManager& containers, SandboxManager& sandboxes, DiskUsageCache& usage,
                               bool systemd_cgroup, std::string layers_mountpoint,
                               std::chrono::milliseconds sample_period)
    : impl_(new Impl(containers, sandboxes, usage, systemd_cgroup, std::move(layers_mountpoint), sample_period)) {}

StatsCollector::~StatsCollector() = default;

Result<v1::ContainerStats> StatsCollector::container(const std::string& id_or_prefix) {
  auto source = impl_->containers.stats_source(id_or_prefix);
  if (!source.ok()) return source.status();
  return impl_->container_stats(*source);
}

std::vector<v1::ContainerStats> StatsCollector::containers(const v1::ContainerStatsFilter& f) {
  std::vector<v1::ContainerStats> out;
  auto all = impl_->containers.stats_sources();
  impl_->forget_removed_containers(all);
  out.reserve(all.size());
  for (auto& c : all) {
    if (!f.id().empty() && c.attributes.id().rfind(f.id(), 0) != 0) continue;
    if (!f.pod_sandbox_id().empty() && c.sandbox_id.rfind(f.pod_sandbox_id(), 0) != 0) continue;
    if (!labels_match(c.attributes.labels(), f.label_selector())) continue;
    out.push_back(impl_->container_stats(c));
  }
  return out;
}

Result<v1::PodSandboxStats> StatsCollector::pod(const std::string& id_or_prefix) {
  auto info = impl_->sandboxes.lookup(id_or_prefix);
  if (!info.ok()) return info.status();
  v1::PodSandboxFilter f;
  f.set_id(info->id);
  auto pods = impl_->sandboxes.stats_sources(f);
  if (pods.empty()) return not_found("pod sandbox " + id_or_prefix + " not found");
  auto all = impl_->containers.stats_sources();
  return impl_->pod_stats(pods.front(), Impl::of_pod(Impl::by_pod(all), pods.front()));
}

std::vector<v1::PodSandboxStats> StatsCollector::pods(const v1::PodSandboxStatsFilter& f) {
  v1::PodSandboxFilter lf;
  lf.set_id(f.id());
  *lf.mutable_label_selector() = f.label_selector();
  auto all = impl_->containers.stats_sources();
  impl_->forget_removed_containers(all);
  auto by_pod = Impl::by_pod(all);
  auto pods = impl_->sandboxes.stats_sources(lf);
  std::vector<v1::PodSandboxStats> out;
  out.reserve(pods.size());
  std::unordered_set<std::string> listed;
  const bool every_pod = f.id().empty() && f.label_selector().empty();
  if (every_pod) listed.reserve(pods.size());
  for (auto& p : pods) {
    if (every_pod) listed.insert(p.attributes.id());
    out.push_back(impl_->pod_stats(p, Impl::of_pod(by_pod, p)));
  }
  if (every_pod) impl_->pod_rates.retain(listed);
  return out;
}

std::vector<v1::PodSandboxMetrics> StatsCollector::metrics() {
  std::vector<v1::PodSandboxMetrics> out;
  v1::PodSandboxFilter ready;
  ready.mutable_state()->set_state(v1::SANDBOX_READY);
  auto all = impl_->containers.stats_sources();
  std::unordered_map<std::string, std::string> images;  // by container id, as the attributes move out
  for (const auto& c : all) images.emplace(c.attributes.id(), c.image);
  auto by_pod = Impl::by_pod(all);
  for (auto& source : impl_->sandboxes.stats_sources(ready)) {
    std::map<std::string, CgroupSample> samples;
    const v1::PodSandboxStats st = impl_->pod_stats(source, Impl::of_pod(by_pod, source), false, &samples);
    const v1::PodSandboxAttributes& p = st.attributes();
    v1::PodSandboxMetrics& pm = out.emplace_back();
    pm.set_pod_sandbox_id(p.id());
    const std::string pod_name = p.metadata().name(), ns = p.metadata().namespace_();
    auto metric = [](google::protobuf::RepeatedPtrField<v1::Metric>* into, const CadvisorMetric& m, int64_t ts,
                     std::vector<std::string> labels, uint64_t value) {
      v1::Metric* x = into->Add();
      x->set_name(m.name);
      x->set_timestamp(ts);
      x->set_metric_type(m.kind == MetricKind::counter ? v1::COUNTER : v1::GAUGE);
      for (auto& l : labels) x->add_label_values(std::move(l));
      x->mutable_value()->set_value(value);
    };
    // Network metrics belong to the pod ("POD", as cAdvisor names the sandbox's container).
    const auto& net = st.linux().network();
    for (const CadvisorMetric& m : cadvisor_metrics()) {
      if (!m.per_interface) continue;
      for (const auto& i : net.interfaces()) {
        uint64_t v = m.source == MetricSource::network_receive_bytes    ? i.rx_bytes().value()
                     : m.source == MetricSource::network_receive_errors ? i.rx_errors().value()
                     : m.source == MetricSource::network_transmit_bytes ? i.tx_bytes().value()
                                                                        : i.tx_errors().value();
        metric(pm.mutable_metrics(), m, net.timestamp(), {"POD", p.id(), "", p.id(), ns, pod_name, i.name()}, v);
      }
    }
    for (const auto& cs : st.linux().containers()) {
      if (!cs.has_cpu()) continue;  // not running
      v1::ContainerMetrics& cm = *pm.add_container_metrics();
      cm.set_container_id(cs.attributes().id());
      std::string image;
      if (auto i = images.find(cs.attributes().id()); i != images.end()) image = i->second;
      std::vector<std::string> labels{
          cs.attributes().metadata().name(), cs.attributes().id(), image, cs.attributes().id(), ns, pod_name};
      for (const CadvisorMetric& m : cadvisor_metrics()) {
        if (m.per_interface) continue;
        uint64_t v = 0;
        switch (m.source) {
          case MetricSource::cpu_usage_seconds: v = cs.cpu().usage_core_nano_seconds().value() / 1'000'000'000; break;
          case MetricSource::memory_usage_bytes: v = cs.memory().usage_bytes().value(); break;
          case MetricSource::memory_working_set_bytes: v = cs.memory().working_set_bytes().value(); break;
          case MetricSource::memory_rss_bytes: v = cs.memory().rss_bytes().value(); break;
          case MetricSource::memory_limit_bytes:
            v = cs.memory().available_bytes().value()
                    ? cs.memory().available_bytes().value() + cs.memory().working_set_bytes().value()
                    : 0;
            break;
          default: continue;  // processes: the pod's figure; block IO and PSI: below
        }
        // The cpu counter is read per call, the memory figures come from the background sample.
        int64_t at = m.source == MetricSource::cpu_usage_seconds ? cs.cpu().timestamp() : cs.memory().timestamp();
        metric(cm.mutable_metrics(), m, at, labels, v);
      }
      // Block IO and PSI: from the sample, as CRI's stats carry no byte counters; a figure the
      // kernel did not give is left out, never sent as zero.
      if (auto it = samples.find(cs.attributes().id()); it != samples.end()) {
        for (const CadvisorMetric& m : cadvisor_metrics())
          if (auto v = cgroup_metric_value(m.source, it->second))
            metric(cm.mutable_metrics(), m, it->second.timestamp_ns, labels, *v);
      }
    }
    if (st.linux().has_process()) {
      for (const CadvisorMetric& m : cadvisor_metrics())
        if (m.source == MetricSource::processes)
          metric(pm.mutable_metrics(), m, st.linux().process().timestamp(), {"POD", p.id(), "", p.id(), ns, pod_name},
                 st.linux().process().process_count().value());
    }
  }
  return out;
}

}  // namespace berth
