// launch_pause: the typed spec read into the launcher's arguments; any member outside the set
// build_pause_spec writes for an unprivileged pod (one it does not model, kept in an `unknown`,
// included) is UNIMPLEMENTED, so the pause never runs
// with less than the runtime would have applied.
#include "pause_launch.h"

#include <fcntl.h>
#include <unistd.h>

#include "berth/cgroup_creation.h"
#include "berth/cgroup_limits.h"
#include "berth/cgroups_path.h"
#include "berth/command.h"
#include "berth/file_text.h"
#include "berth/systemd_units.h"

namespace berth {

namespace {

Status unsupported(const std::string& what) {
  return Status(Code::unimplemented, "berth-pause-launch does not apply " + what);
}

// The limits of the spec's linux.resources, as the runtime would write them.
Result<CgroupLimits> limits_of(const oci::Linux& linux) {
  CgroupLimits l;
  if (!linux.resources) return l;
  const oci::Resources& r = *linux.resources;
  if (std::string k = oci::first_unknown(r.unknown); !k.empty()) return unsupported("linux.resources." + k);
  if (!r.devices.empty() || !r.hugepage_limits.empty() || !r.unified.empty())
    return unsupported("linux.resources beyond cpu and memory");
  if (r.cpu) {
    if (std::string k = oci::first_unknown(r.cpu->unknown); !k.empty()) return unsupported("linux.resources.cpu." + k);
    l.cpu_shares = static_cast<int64_t>(r.cpu->shares.value_or(0));
    l.cpu_quota = r.cpu->quota.value_or(0);
    l.cpu_period = static_cast<int64_t>(r.cpu->period.value_or(0));
    l.cpuset_cpus = r.cpu->cpus;
    l.cpuset_mems = r.cpu->mems;
  }
  if (r.memory) {
    if (std::string k = oci::first_unknown(r.memory->unknown); !k.empty() || r.memory->swap)
      return unsupported("linux.resources.memory beyond its limit");
    l.memory = r.memory->limit.value_or(0);
  }
  return l;
}

// What the launcher is told, read from the spec before anything is made.
struct LaunchPlan {
  std::vector<std::string> args;  // up to the cgroup's procs files, which come once it exists
  std::vector<std::string> command;
  std::string cgroups_path;
  CgroupLimits limits;
  std::string bpf;
};

bool has_any(const oci::Capabilities& c) {
  return !c.bounding.empty() || !c.effective.empty() || !c.inheritable.empty() || !c.permitted.empty() ||
         !c.ambient.empty() || !c.unknown.empty();
}

// The process: nothing beyond the pause's own (no capability, no_new_privs, no terminal, "/").
Status read_process(const oci::Process& p, LaunchPlan& plan) {
  if (std::string k = oci::first_unknown(p.unknown); !k.empty()) return unsupported("process." + k);
  if (!p.rlimits.empty() || !p.apparmor_profile.empty() || !p.selinux_label.empty())
    return unsupported("process rlimits or security labels");
  if (p.capabilities && has_any(*p.capabilities)) return unsupported("capabilities");
  if (!p.no_new_privileges) return unsupported("a process without no_new_privs");
  if (p.terminal || (p.cwd != "/" && !p.cwd.empty())) return unsupported("a terminal or a cwd");
  if (p.user.umask || !p.user.unknown.empty()) return unsupported("process.user beyond its ids");
  plan.args.insert(plan.args.end(), {"--uid", std::to_string(p.user.uid), "--gid", std::to_string(p.user.gid)});
  for (uint32_t g : p.user.additional_gids) plan.args.insert(plan.args.end(), {"--group", std::to_string(g)});
  if (p.oom_score_adj) plan.args.insert(plan.args.end(), {"--oom", std::to_string(*p.oom_score_adj)});
  if (p.args.empty()) return internal_error("pause spec: field 'process.args': empty");
  plan.command = p.args;
  return ok_status();
}

// The mounts: the pod's /dev/shm, and only the pseudo-filesystems the launcher mounts itself.
Status read_mounts(const std::vector<oci::Mount>& mounts, LaunchPlan& plan, bool* has_mqueue) {
  bool shm = false;
  for (const oci::Mount& m : mounts) {
    const std::string& dest = m.destination;
    if (dest == "/dev/shm") {
      plan.args.insert(plan.args.end(), {"--shm", m.source});
      shm = true;
    } else if (dest == "/sys" && m.type == "bind") {
      plan.args.insert(plan.args.end(), {"--sys", m.source});
    } else if (dest != "/proc" && dest != "/dev" && dest != "/dev/pts" && dest != "/sys" && dest != "/dev/mqueue") {
      return unsupported("the mount " + dest);
    }
    *has_mqueue |= dest == "/dev/mqueue";
  }
  if (!shm) return unsupported("a pause without /dev/shm");
  return ok_status();
}

// linux: the namespaces (the pod's netns and user namespace joined by path, the rest new),
// sysctls, masked and read-only paths, seccomp, the cgroup and its limits.
Status read_linux(const oci::Linux& linux, bool has_mqueue, SeccompProgramCache& seccomp, LaunchPlan& plan) {
  if (std::string k = oci::first_unknown(linux.unknown); !k.empty()) return unsupported("linux." + k);
  if (!linux.devices.empty() || !linux.rootfs_propagation.empty())
    return unsupported("linux.devices or linux.rootfsPropagation");
  bool new_ipc = false, joins_userns = false;
  for (const oci::Namespace& ns : linux.namespaces) {
    if (!ns.unknown.empty()) return unsupported("the " + ns.type + " namespace as asked");
    if (ns.type == "network" && !ns.path.empty()) {
      plan.args.insert(plan.args.end(), {"--netns", ns.path});
    } else if (ns.type == "user" && !ns.path.empty()) {
      plan.args.insert(plan.args.end(), {"--userns", ns.path});
      joins_userns = true;
    } else if (!ns.path.empty() || ns.type == "network" || ns.type == "user") {
      return unsupported("the " + ns.type + " namespace as asked");
    } else {
      plan.args.insert(plan.args.end(), {"--new", ns.type});
      new_ipc |= ns.type == "ipc";
    }
  }
  // uidMappings and gidMappings go with a user namespace joined by path: they are its own maps.
  if ((!linux.uid_mappings.empty() || !linux.gid_mappings.empty()) && !joins_userns)
    return unsupported("linux.uidMappings without a user namespace joined by path");
  if (has_mqueue != new_ipc) return unsupported("/dev/mqueue without an IPC namespace of the pod's own");
  for (const auto& [k, v] : linux.sysctl) plan.args.insert(plan.args.end(), {"--sysctl", k + "=" + v});
  for (const auto& m : linux.masked_paths) plan.args.insert(plan.args.end(), {"--mask", m});
  for (const auto& m : linux.readonly_paths) plan.args.insert(plan.args.end(), {"--readonly", m});
  if (linux.cgroups_path.empty()) return internal_error("pause spec: field 'linux.cgroupsPath': missing");
  plan.cgroups_path = linux.cgroups_path;
  if (linux.seccomp) {
    auto program = seccomp.get(*linux.seccomp);
    if (!program.ok())
      return program.status().code() == Code::unimplemented ? program.status()
                                                            : program.status().context("pause spec linux.seccomp");
    if (program->flags != 0) return unsupported("seccomp flags");
    plan.bpf = program->bpf;
  }
  auto limits = limits_of(linux);
  if (!limits.ok()) return limits.status();
  plan.limits = *limits;
  return ok_status();
}

// The whole spec, or UNIMPLEMENTED for what only the runtime applies. A spec without a part the
// pause needs is berth's bug (build_pause_spec writes it), reported as INTERNAL naming the field.
Result<LaunchPlan> plan_launch(const std::string& launcher, const oci::Spec& spec, SeccompProgramCache& seccomp) {
  if (std::string k = oci::first_unknown(spec.unknown); !k.empty()) return unsupported(k);
  if (!spec.hooks.empty() || !spec.annotations.empty()) return unsupported("hooks or annotations");
  if (!spec.process || !spec.root || !spec.linux)
    return internal_error(std::string("pause spec: field '") +
                          (!spec.process ? "process"
                           : !spec.root  ? "root"
                                         : "linux") +
                          "': missing");
  LaunchPlan plan;
  if (Status s = read_process(*spec.process, plan); !s.ok()) return s;
  if (!spec.root->readonly) return unsupported("a writable root");
  if (std::string k = oci::first_unknown(spec.root->unknown); !k.empty()) return unsupported("root." + k);
  plan.args.insert(plan.args.begin(), {launcher, "--rootfs", spec.root->path});
  bool has_mqueue = false;
  if (Status s = read_mounts(spec.mounts, plan, &has_mqueue); !s.ok()) return s;
  if (Status s = read_linux(*spec.linux, has_mqueue, seccomp, plan); !s.ok()) return s;
  if (!spec.hostname.empty()) plan.args.insert(plan.args.end(), {"--hostname", spec.hostname});
  return plan;
}

}  // namespace

namespace {

// cgroupfs: berthd makes the cgroup and the launcher writes itself into its procs files.
Status make_pause_cgroup(const LaunchPlan& plan, std::vector<std::string>& args) {
  std::string dir = cgroup_dir_of(plan.cgroups_path, false);
  auto procs = create_cgroup(dir);
  if (!procs.ok()) return procs.status().context("pause cgroup");
  if (Status s = write_cgroup_limits(dir, plan.limits, host_cgroup_v2()); !s.ok()) return s.context("pause cgroup");
  // No device at all: the runtime's default list allows a few nodes the pause never opens.
  if (!host_cgroup_v2())
    if (FILE* f = std::fopen(("/sys/fs/cgroup/devices" + dir + "/devices.deny").c_str(), "we")) {
      bool ok = std::fputs("a", f) >= 0;
      if (std::fclose(f) != 0 || !ok) return internal_error("pause cgroup: deny devices in " + dir);
    }
  for (const auto& procs_file : *procs) args.insert(args.end(), {"--cgroup-procs", procs_file});
  return ok_status();
}

// systemd: the scope is systemd's to make, with the launcher in it (a scope starts with its
// processes), so the launcher waits on a pipe until berthd has asked for it. Its limits are the
// scope's properties and then written as the cgroupfs path writes them, as runc's systemd driver
// does (systemd's own conversions round differently).
Status start_pause_scope(SystemdUnits& systemd, const LaunchPlan& plan, pid_t launcher, int go_fd) {
  SystemdCgroup unit = systemd_cgroup_of(plan.cgroups_path);
  if (unit.scope.empty()) return internal_error("pause spec: field 'linux.cgroupsPath': not a systemd path");
  auto props = unit_properties(plan.limits, host_cgroup_v2());
  if (!props.ok()) return props.status().context("pause scope");
  props->push_back({"DevicePolicy", std::string("strict")});  // no device at all, as above
  ScopeUnit scope{.name = unit.scope, .slice = unit.slice, .pid = launcher, .description = "berth pod sandbox pause"};
  scope.properties = std::move(*props);
  if (Status s = systemd.start_scope(scope); !s.ok()) return s.context("pause scope");
  if (Status s = write_cgroup_limits(cgroup_dir_of(plan.cgroups_path, true), plan.limits, host_cgroup_v2()); !s.ok())
    return s.context("pause scope");
  if (::write(go_fd, "1", 1) != 1) return errno_status(errno, "pause scope: tell the launcher");
  return ok_status();
}

}  // namespace

Result<pid_t> launch_pause(const std::string& launcher, const oci::Spec& spec, SystemdUnits* systemd,
                           SeccompProgramCache& seccomp) {
  if (launcher.empty()) return unsupported("anything: no launcher is configured");
  auto plan = plan_launch(launcher, spec, seccomp);
  if (!plan.ok()) return plan.status();

  // From here on something is made: the cgroup, then the pause.
  std::vector<std::string> args = std::move(plan->args);
  Command command{.argv = {}, .stdin_data = plan->bpf, .timeout = std::chrono::seconds(30), .capture_report = true};
  Pipe go;
  UniqueFd devnull;
  if (systemd) {
    auto p = make_pipe();
    if (!p.ok()) return p.status().context("pause scope");
    go = std::move(*p);
    devnull.reset(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!devnull) return errno_status(errno, "pause scope: open /dev/null");
    args.insert(args.end(), {"--cgroup-wait", "3"});
    command.pass_fds = {go.read.get(), devnull.get()};
    command.on_started = [&](pid_t pid) {
      Status s = start_pause_scope(*systemd, *plan, pid, go.write.get());
      go.write.reset();
      return s;
    };
  } else if (Status s = make_pause_cgroup(*plan, args); !s.ok()) {
    return s;
  }
  args.push_back("--");
  args.insert(args.end(), plan->command.begin(), plan->command.end());
  command.argv = std::move(args);

  auto r = run_command(command);
  if (!r.ok()) return r.status().context("berth-pause-launch");
  if (std::string why = r->report_value("error"); !why.empty()) return internal_error("berth-pause-launch: " + why);
  pid_t pid = std::atoi(r->report_value("pid").c_str());
  if (!r->success() || pid <= 0)
    return internal_error("berth-pause-launch: " + r->describe(command.timeout) +
                          (r->err.empty() ? "" : ": " + r->err));
  return pid;
}

}  // namespace berth
