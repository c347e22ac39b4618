// launch_pause: the spec read field by field into the launcher's arguments; any field outside the
// set build_pause_spec writes for an unprivileged pod is UNIMPLEMENTED, so the pause never runs
// with less than the runtime would have applied.
#include "pause_launch.h"

#include <set>

#include "berth/cgroup_creation.h"
#include "berth/cgroup_limits.h"
#include "berth/cgroups_path.h"
#include "berth/command.h"
#include "berth/file_text.h"
#include "berth/json_fields.h"

namespace berth {

using nlohmann::json;

namespace {

Status unsupported(const std::string& what) {
  return Status(Code::unimplemented, "berth-pause-launch does not apply " + what);
}

// The limits of the spec's linux.resources, as the runtime would write them.
Result<CgroupLimits> limits_of(JsonFields& linux) {
  CgroupLimits l;
  const json* r = linux.object("resources");
  if (!r) return l;
  for (const auto& item : r->items())
    if (item.key() != "cpu" && item.key() != "memory") return unsupported("linux.resources." + item.key());
  JsonFields resources = linux.nested(*r, "resources");
  if (const json* c = resources.object("cpu")) {
    JsonFields cpu = resources.nested(*c, "cpu");
    l.cpu_shares = cpu.integer<int64_t>("shares", 0);
    l.cpu_quota = cpu.integer<int64_t>("quota", 0);
    l.cpu_period = cpu.integer<int64_t>("period", 0);
    l.cpuset_cpus = cpu.string("cpus");
    l.cpuset_mems = cpu.string("mems");
  }
  if (const json* m = resources.object("memory"))
    l.memory = resources.nested(*m, "memory").integer<int64_t>("limit", 0);
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

// The process: nothing beyond the pause's own (no capability, no_new_privs, no terminal, "/").
Status read_process(JsonFields& spec, LaunchPlan& plan) {
  const json* process = spec.required_object("process");
  if (!process) return ok_status();  // reported with the spec's other failures
  static const std::set<std::string> process_keys = {
      "terminal", "user", "args", "env", "cwd", "capabilities", "noNewPrivileges", "oomScoreAdj"};
  for (const auto& item : process->items())
    if (!process_keys.count(item.key())) return unsupported("process." + item.key());
  JsonFields p = spec.nested(*process, "process");
  if (const json* caps = p.object("capabilities")) {
    JsonFields c = p.nested(*caps, "capabilities");
    for (const auto& item : caps->items())
      if (const json* set = c.array(item.key().c_str()); set && !set->empty()) return unsupported("capabilities");
  }
  if (!p.boolean("noNewPrivileges", false)) return unsupported("a process without no_new_privs");
  if (p.boolean("terminal", false) || p.string("cwd", "/") != "/") return unsupported("a terminal or a cwd");
  if (const json* u = p.required_object("user")) {
    JsonFields user = p.nested(*u, "user");
    plan.args.insert(plan.args.end(), {"--uid", std::to_string(user.integer<uint32_t>("uid", 0)), "--gid",
                                       std::to_string(user.integer<uint32_t>("gid", 0))});
    for (uint32_t g : user.integers<uint32_t>("additionalGids"))
      plan.args.insert(plan.args.end(), {"--group", std::to_string(g)});
  }
  if (p.member("oomScoreAdj"))
    plan.args.insert(plan.args.end(), {"--oom", std::to_string(p.required_integer<int>("oomScoreAdj"))});
  p.required_array("args");
  plan.command = p.strings("args");
  return ok_status();
}

// The mounts: the pod's /dev/shm, and only the pseudo-filesystems the launcher mounts itself.
Status read_mounts(JsonFields& spec, LaunchPlan& plan, bool* has_mqueue) {
  const json* mounts = spec.required_array("mounts");
  bool shm = false;
  for (size_t i = 0; mounts && i < mounts->size(); ++i) {
    JsonFields m = spec.nested((*mounts)[i], "mounts[" + std::to_string(i) + "]");
    std::string dest = m.required_string("destination");
    if (!spec.ok()) return ok_status();
    if (dest == "/dev/shm") {
      plan.args.insert(plan.args.end(), {"--shm", m.required_string("source")});
      shm = true;
    } else if (dest != "/proc" && dest != "/dev" && dest != "/dev/pts" && dest != "/sys" && dest != "/dev/mqueue") {
      return unsupported("the mount " + dest);
    }
    *has_mqueue |= dest == "/dev/mqueue";
  }
  if (spec.ok() && !shm) return unsupported("a pause without /dev/shm");
  return ok_status();
}

// linux: the namespaces (the pod's netns and user namespace joined by path, the rest new),
// sysctls, masked and read-only paths, seccomp, the cgroup and its limits.
Status read_linux(JsonFields& spec, bool has_mqueue, SeccompProgramCache& seccomp, LaunchPlan& plan) {
  const json* l = spec.required_object("linux");
  if (!l) return ok_status();
  // uidMappings and gidMappings go with a user namespace joined by path: they are its own maps.
  static const std::set<std::string> linux_keys = {"namespaces",    "cgroupsPath", "resources",
                                                   "sysctl",        "seccomp",     "maskedPaths",
                                                   "readonlyPaths", "uidMappings", "gidMappings"};
  for (const auto& item : l->items())
    if (!linux_keys.count(item.key())) return unsupported("linux." + item.key());
  JsonFields linux = spec.nested(*l, "linux");
  bool new_ipc = false, joins_userns = false;
  const json* namespaces = linux.required_array("namespaces");
  for (size_t i = 0; namespaces && i < namespaces->size(); ++i) {
    JsonFields ns = linux.nested((*namespaces)[i], "namespaces[" + std::to_string(i) + "]");
    std::string type = ns.required_string("type");
    std::string path = ns.string("path");
    if (!spec.ok()) return ok_status();
    if (type == "network" && !path.empty()) {
      plan.args.insert(plan.args.end(), {"--netns", path});
    } else if (type == "user" && !path.empty()) {
      plan.args.insert(plan.args.end(), {"--userns", path});
      joins_userns = true;
    } else if (!path.empty() || type == "network" || type == "user") {
      return unsupported("the " + type + " namespace as asked");
    } else {
      plan.args.insert(plan.args.end(), {"--new", type});
      new_ipc |= type == "ipc";
    }
  }
  if ((linux.member("uidMappings") || linux.member("gidMappings")) && !joins_userns)
    return unsupported("linux.uidMappings without a user namespace joined by path");
  if (has_mqueue != new_ipc) return unsupported("/dev/mqueue without an IPC namespace of the pod's own");
  for (const auto& [k, v] : linux.string_map("sysctl")) plan.args.insert(plan.args.end(), {"--sysctl", k + "=" + v});
  for (const auto& m : linux.strings("maskedPaths")) plan.args.insert(plan.args.end(), {"--mask", m});
  for (const auto& m : linux.strings("readonlyPaths")) plan.args.insert(plan.args.end(), {"--readonly", m});
  plan.cgroups_path = linux.required_string("cgroupsPath");
  if (!spec.ok()) return ok_status();
  if (const json* section = linux.member("seccomp")) {
    auto program = seccomp.get(*section);
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

// The whole spec, or UNIMPLEMENTED for what only the runtime applies. A spec that does not read is
// berth's bug (build_pause_spec writes it), reported as INTERNAL naming the field.
Result<LaunchPlan> plan_launch(const std::string& launcher, const json& spec, SeccompProgramCache& seccomp) {
  static const std::set<std::string> top = {"ociVersion", "process", "root", "mounts", "linux", "hostname"};
  if (spec.is_object())
    for (const auto& item : spec.items())
      if (!top.count(item.key())) return unsupported(item.key());
  JsonFields f(spec, "pause spec");
  LaunchPlan plan;
  if (Status s = read_process(f, plan); !s.ok()) return s;
  const json* root = f.required_object("root");
  if (root) {
    JsonFields r = f.nested(*root, "root");
    const bool read_only = r.boolean("readonly", false);
    if (f.ok() && !read_only) return unsupported("a writable root");
    plan.args.insert(plan.args.begin(), {launcher, "--rootfs", r.required_string("path")});
  }
  bool has_mqueue = false;
  if (Status s = read_mounts(f, plan, &has_mqueue); !s.ok()) return s;
  if (Status s = read_linux(f, has_mqueue, seccomp, plan); !s.ok()) return s;
  if (f.member("hostname")) plan.args.insert(plan.args.end(), {"--hostname", f.required_string("hostname")});
  if (!f.ok()) return internal_error(f.status().message());
  return plan;
}

}  // namespace

Result<pid_t> launch_pause(const std::string& launcher, const json& spec, bool systemd_cgroup,
                           SeccompProgramCache& seccomp) {
  if (launcher.empty()) return unsupported("anything: no launcher is configured");
  if (systemd_cgroup) return unsupported("the systemd cgroup driver");
  auto plan = plan_launch(launcher, spec, seccomp);
  if (!plan.ok()) return plan.status();

  // From here on something is made: the cgroup, then the pause.
  std::vector<std::string> args = std::move(plan->args);
  std::string dir = cgroup_dir_of(plan->cgroups_path, false);
  auto procs = create_cgroup(dir);
  if (!procs.ok()) return procs.status().context("pause cgroup");
  if (Status s = write_cgroup_limits(dir, plan->limits, host_cgroup_v2()); !s.ok()) return s.context("pause cgroup");
  // No device at all: the runtime's default list allows a few nodes the pause never opens.
  if (!host_cgroup_v2())
    if (FILE* f = std::fopen(("/sys/fs/cgroup/devices" + dir + "/devices.deny").c_str(), "we")) {
      bool ok = std::fputs("a", f) >= 0;
      if (std::fclose(f) != 0 || !ok) return internal_error("pause cgroup: deny devices in " + dir);
    }
  for (const auto& procs_file : *procs) args.insert(args.end(), {"--cgroup-procs", procs_file});
  args.push_back("--");
  args.insert(args.end(), plan->command.begin(), plan->command.end());

  Command command{.argv = args, .stdin_data = plan->bpf, .timeout = std::chrono::seconds(30), .capture_report = true};
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
