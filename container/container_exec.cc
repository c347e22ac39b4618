// ExecSync (berth-exec, else `runtime exec`, with the container's own process settings, output
// capped at 16 MiB per stream, the process killed at the timeout), UpdateContainerResources (`runtime update`, and the
// record) and ReopenContainerLog (asked of the container's monitor).
#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

#include <sstream>

#include <spdlog/spdlog.h>

#include "berth/cgroup_limits.h"
#include "berth/cgroup_removal.h"
#include "berth/cgroups_path.h"
#include "berth/command.h"
#include "berth/file_text.h"
#include "berth/mutex.h"
#include "berth/process_identity.h"
#include "berth/atomic_file.h"
#include "berth/container_spec.h"
#include "container_state.h"

namespace berth {

namespace v1 = runtime::v1;

namespace {

// stdout and stderr together must fit one CRI response, which kubelet reads with a 16 MiB limit.
constexpr size_t kExecOutputLimit = (16 << 20) - 4096;

std::string random_suffix() {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof v, 0) != sizeof v) v = static_cast<uint64_t>(::random());
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Fields set (non-zero) in `update` replace those of `current`, as containerd merges them.
v1::LinuxContainerResources merged(const v1::LinuxContainerResources& current,
                                   const v1::LinuxContainerResources& update) {
  v1::LinuxContainerResources r = current;
  if (update.cpu_period()) r.set_cpu_period(update.cpu_period());
  if (update.cpu_quota()) r.set_cpu_quota(update.cpu_quota());
  if (update.cpu_shares()) r.set_cpu_shares(update.cpu_shares());
  if (update.memory_limit_in_bytes()) r.set_memory_limit_in_bytes(update.memory_limit_in_bytes());
  if (update.memory_swap_limit_in_bytes()) r.set_memory_swap_limit_in_bytes(update.memory_swap_limit_in_bytes());
  if (update.oom_score_adj()) r.set_oom_score_adj(update.oom_score_adj());
  if (!update.cpuset_cpus().empty()) r.set_cpuset_cpus(update.cpuset_cpus());
  if (!update.cpuset_mems().empty()) r.set_cpuset_mems(update.cpuset_mems());
  if (update.hugepage_limits_size() > 0) *r.mutable_hugepage_limits() = update.hugepage_limits();
  for (const auto& [k, v] : update.unified()) (*r.mutable_unified())[k] = v;
  return r;
}

ExecSyncOutput capped_output(CommandResult& r) {
  ExecSyncOutput out{std::move(r.out), std::move(r.err), r.term_signal ? 128 + r.term_signal : r.exit_code};
  if (out.out.size() + out.err.size() > kExecOutputLimit)
    out.err.resize(kExecOutputLimit - std::min(out.out.size(), kExecOutputLimit));
  if (out.out.size() > kExecOutputLimit) out.out.resize(kExecOutputLimit);
  return out;
}

Status exec_timed_out(const std::string& id, int64_t timeout_seconds, bool gone) {
  return deadline_exceeded("exec in container " + id + ": timed out after " + std::to_string(timeout_seconds) + "s; " +
                           (gone ? "the command was killed" : "the command was killed but has not exited yet"));
}

}  // namespace

Result<std::optional<ExecSyncOutput>> ContainerManager::Impl::exec_with_helper(const Container& c,
                                                                               const oci::Spec& spec,
                                                                               const std::vector<std::string>& cmd,
                                                                               int64_t timeout_seconds) {
  const std::string& id = c.id;
  if (!exec_helper.present()) return std::optional<ExecSyncOutput>();
  // Entering the container's namespaces is the runtime's own exec only for namespaced host
  // processes; in a sandboxing runtime a probe must run inside its boundary.
  if (!opt.runtimes.features(c.runtime_handler).host_processes) {
    spdlog::debug("exec in container {}: through the runtime: handler {} does not run host processes", id,
                  opt.runtimes.resolve(c.runtime_handler));
    return std::optional<ExecSyncOutput>();
  }
  pid_t pid;
  {
    MutexLock lock(c.mu);
    pid = c.rec.pid;
  }
  // The init, held by a pidfd and checked to be the container's after it was opened (a recycled
  // pid names a stranger outside the container's cgroup).
  UniqueFd init = pid > 0 ? open_pidfd(pid) : UniqueFd();
  if (!init || !process_in_cgroup_leaf(pid, id)) return std::optional<ExecSyncOutput>();
  std::vector<std::string> procs;
  std::string dir = cgroup_dir_of(c.cgroups_path, opt.runtimes.systemd_cgroup());
  // crun on cgroup v2 runs a container in a cgroup below its own ("container" under a systemd
  // scope), and v2 lets no process into a cgroup that has children: the init's is the one to join.
  if (std::string own = unified_cgroup_of(pid); host_cgroup_v2() && own.rfind(dir + "/", 0) == 0) dir = own;
  for (const auto& mount : cgroup_hierarchy_mounts())
    if (::access((mount + dir + "/cgroup.procs").c_str(), F_OK) == 0) procs.push_back(mount + dir + "/cgroup.procs");
  auto request = exec_helper_request(spec, cmd, procs, seccomp_programs);
  if (!request.ok()) {
    if (request.status().code() != Code::unimplemented) return request.status().context("exec in container " + id);
    spdlog::debug("exec in container {}: through the runtime: {}", id, request.status().message());
    return std::optional<ExecSyncOutput>();
  }
  Command command{.argv = {exec_helper.exec_path()},
                  .stdin_data = std::move(*request),
                  .timeout = std::chrono::seconds(timeout_seconds),
                  .output_limit = kExecOutputLimit,
                  .pass_fds = {init.get()},
                  .capture_report = true};
  // The command runs in the container's pid namespace and may leave the helper's process group:
  // it is killed by its pid (through a pidfd, while it is the container's), the helper then
  // reaps it and exits.
  bool gone = true;
  command.on_timeout = [&](const CommandResult& so_far) {
    pid_t exec_pid = std::atoi(so_far.report_value("pid").c_str());
    gone = exec_pid <= 0 || kill_container_process(exec_pid, id, std::chrono::seconds(10));
  };
  auto r = run_command(command);
  if (!r.ok()) return r.status().context("exec in container " + id + ": berth-exec");
  if (r->timed_out) return exec_timed_out(id, timeout_seconds, gone);
  if (std::string why = r->report_value("unsupported"); !why.empty()) {
    spdlog::debug("exec in container {}: through the runtime: berth-exec: {}", id, why);
    return std::optional<ExecSyncOutput>();
  }
  if (std::string why = r->report_value("error"); !why.empty())
    return internal_error("exec in container " + id + ": " + why);
  return std::optional<ExecSyncOutput>(capped_output(*r));
}

Result<ExecSyncOutput> ContainerManager::exec_sync(const std::string& id_or_prefix, const std::vector<std::string>& cmd,
                                                   int64_t timeout_seconds) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  const std::string id = c->id;
  if (c->state() != v1::CONTAINER_RUNNING)
    return failed_precondition("exec in container " + id + ": it is not running");
  auto rt = impl_->runtime_for(c->runtime_handler);
  if (!rt.ok()) return rt.status();
  auto spec = oci::read_spec_file(c->bundle + "/config.json");
  if (!spec.ok()) return spec.status().context("exec in container " + id);
  auto helped = impl_->exec_with_helper(*c, *spec, cmd, timeout_seconds);
  if (!helped.ok()) return helped.status();
  if (*helped) return std::move(**helped);
  std::string base = c->bundle + "/exec-" + random_suffix();
  struct Cleanup {
    std::string base;
    ~Cleanup() {
      for (const char* ext : {".json", ".pid", ".log"}) ::unlink((base + ext).c_str());
    }
  } cleanup{base};
  auto process = exec_process(*spec, cmd, false);
  if (!process.ok()) return process.status().context("exec in container " + id);
  if (Status s = write_file_atomically(base + ".json", oci::to_json(*process).dump(), 0600, false); !s.ok()) return s;
  Command command{.argv = rt->argv({"--log", base + ".log", "--log-format", "json", "exec", "--process", base + ".json",
                                    "--pid-file", base + ".pid", id}),
                  .timeout = std::chrono::seconds(timeout_seconds),
                  .output_limit = kExecOutputLimit};
  // The process runc started runs in the container's pid namespace, outside runc's process group:
  // it is killed first, while runc still waits for it, so runc reaps it and then exits by itself.
  // Killed through a pidfd, and only while it is one of the container's (its pid may have been
  // reused). The rpc answers once it is gone.
  bool gone = true;
  command.on_timeout = [&](const CommandResult&) {
    pid_t pid = read_pid_file(base + ".pid");
    gone = pid <= 0 || kill_container_process(pid, id, std::chrono::seconds(10));
  };
  auto r = run_command(command);
  if (!r.ok()) return r.status().context("exec in container " + id);
  if (r->timed_out) return exec_timed_out(id, timeout_seconds, gone);
  if (std::string msg = runtime_log_error(base + ".log"); !msg.empty())
    return internal_error("exec in container " + id + ": " + rt->binary() + ": " + msg);
  return capped_output(*r);
}

Status ContainerManager::update_resources(const std::string& id_or_prefix, const v1::LinuxContainerResources& update) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  MutexLock op(c->op);
  const std::string id = c->id;
  auto state = c->state();
  if (state != v1::CONTAINER_RUNNING && state != v1::CONTAINER_CREATED)
    return failed_precondition("update container " + id + ": it is " + v1::ContainerState_Name(state));
  v1::LinuxContainerResources next;
  {
    MutexLock lock(c->mu);
    next = merged(c->config.linux().resources(), update);
  }
  auto wanted = oci_resources(next, host_cgroup_v2());
  if (!wanted.ok()) return wanted.status().context("update container " + id);
  if (state == v1::CONTAINER_RUNNING && update.memory_limit_in_bytes() > 0)
    if (Status s = check_memory_limit(cgroup_dir_of(c->cgroups_path, impl_->opt.runtimes.systemd_cgroup()),
                                      update.memory_limit_in_bytes(), host_cgroup_v2());
        !s.ok())
      return s.context("update container " + id + ": config.linux.resources.memory_limit_in_bytes");
  if (state == v1::CONTAINER_RUNNING) {
    auto rt = impl_->runtime_for(c->runtime_handler);
    if (!rt.ok()) return rt.status();
    if (Status s = rt->update(id, oci::to_json(*wanted).dump(), c->bundle); !s.ok())
      return s.context("update container " + id);
  }
  // The bundle's spec follows, so a container created but not started starts with them.
  // A config.json damaged on disk is left as it is. The device rules stay as created.
  auto spec = oci::read_spec_file(c->bundle + "/config.json");
  if (spec.ok()) {
    oci::Linux& linux = spec->linux ? *spec->linux : spec->linux.emplace();
    if (linux.resources) wanted->devices = std::move(linux.resources->devices);
    linux.resources = std::move(*wanted);
    if (Status s = write_file_atomically(c->bundle + "/config.json", oci::to_json(*spec).dump(), 0600, false); !s.ok())
      return s;
  } else {
    spdlog::warn("update container {}: its config.json is left as it is: {}", id, spec.status().message());
  }
  MutexLock lock(c->mu);
  *c->config.mutable_linux()->mutable_resources() = next;
  auto cfg = config_to_json(c->config);
  if (!cfg.ok()) return cfg.status();
  c->rec.config = *cfg;
  return impl_->save(*c);
}

Status ContainerManager::reopen_log(const std::string& id_or_prefix) {
  Status err;
  auto c = impl_->find(id_or_prefix, &err);
  if (!c) return err;
  {
    MutexLock lock(c->mu);
    if (c->rec.state != v1::CONTAINER_RUNNING)
      return failed_precondition("reopen log of container " + c->id + ": it is not running");
    if (c->rec.log_path.empty())
      return failed_precondition("reopen log of container " + c->id + ": it has no log file");
  }
  return berth::reopen_log(c->socket, std::chrono::seconds(10)).context("reopen log of container " + c->id);
}

}  // namespace berth
