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

namespace berth {

using nlohmann::json;

namespace {

Status unsupported(const std::string& what) { return Status(Code::unimplemented, "berth-pause-launch does not apply " + what); }

bool is_empty_list(const json& v) { return v.is_null() || (v.is_array() && v.empty()); }

// The limits of the spec's linux.resources, as the runtime would write them.
Result<CgroupLimits> limits_of(const json& r) {
  CgroupLimits l;
  if (r.is_null()) return l;
  if (!r.is_object()) return internal_error("pause spec: linux.resources is not an object");
  for (const auto& [k, v] : r.items())
    if (k != "cpu" && k != "memory") return unsupported("linux.resources." + k);
  if (r.contains("cpu") && r["cpu"].is_object()) {
    const json& c = r["cpu"];
    l.cpu_shares = c.value("shares", int64_t{0});
    l.cpu_quota = c.value("quota", int64_t{0});
    l.cpu_period = c.value("period", int64_t{0});
    l.cpuset_cpus = c.value("cpus", std::string());
    l.cpuset_mems = c.value("mems", std::string());
  }
  if (r.contains("memory") && r["memory"].is_object()) l.memory = r["memory"].value("limit", int64_t{0});
  return l;
}

}  // namespace

Result<pid_t> launch_pause(const std::string& launcher, const json& spec, bool systemd_cgroup, SeccompProgramCache& seccomp) {
  if (launcher.empty()) return unsupported("anything: no launcher is configured");
  if (systemd_cgroup) return unsupported("the systemd cgroup driver");
  try {
    static const std::set<std::string> top = {"ociVersion", "process", "root", "mounts", "linux", "hostname"};
    for (const auto& [k, v] : spec.items())
      if (!top.count(k)) return unsupported(k);
    const json& p = spec.at("process");
    static const std::set<std::string> process_keys = {"terminal", "user", "args", "env", "cwd", "capabilities", "noNewPrivileges", "oomScoreAdj"};
    for (const auto& [k, v] : p.items())
      if (!process_keys.count(k)) return unsupported("process." + k);
    // (Named: items() of a temporary would outlive it.)
    const json caps = p.value("capabilities", json::object());
    for (const auto& [k, v] : caps.items())
      if (!is_empty_list(v)) return unsupported("capabilities");
    if (!p.value("noNewPrivileges", false)) return unsupported("a process without no_new_privs");
    if (p.value("terminal", false) || p.value("cwd", std::string("/")) != "/") return unsupported("a terminal or a cwd");
    if (!spec.at("root").value("readonly", false)) return unsupported("a writable root");

    std::vector<std::string> args = {launcher, "--rootfs", spec["root"].at("path").get<std::string>()};
    bool shm = false;
    for (const auto& m : spec.at("mounts")) {
      std::string dest = m.at("destination").get<std::string>();
      if (dest == "/dev/shm") {
        args.insert(args.end(), {"--shm", m.at("source").get<std::string>()});
        shm = true;
      } else if (dest != "/proc" && dest != "/dev" && dest != "/dev/pts" && dest != "/sys" && dest != "/dev/mqueue") {
        return unsupported("the mount " + dest);
      }
    }
    if (!shm) return unsupported("a pause without /dev/shm");
    const json& linux = spec.at("linux");
    // uidMappings and gidMappings go with a user namespace joined by path: they are its own maps.
    static const std::set<std::string> linux_keys = {"namespaces", "cgroupsPath", "resources", "sysctl", "seccomp", "maskedPaths",
                                                     "readonlyPaths", "uidMappings", "gidMappings"};
    for (const auto& [k, v] : linux.items())
      if (!linux_keys.count(k)) return unsupported("linux." + k);
    bool new_ipc = false, joins_userns = false;
    for (const auto& ns : linux.at("namespaces")) {
      std::string type = ns.at("type").get<std::string>();
      std::string path = ns.value("path", std::string());
      if (type == "network" && !path.empty()) {
        args.insert(args.end(), {"--netns", path});
      } else if (type == "user" && !path.empty()) {
        args.insert(args.end(), {"--userns", path});
        joins_userns = true;
      } else if (!path.empty() || type == "network" || type == "user") {
        return unsupported("the " + type + " namespace as asked");
      } else {
        args.insert(args.end(), {"--new", type});
        new_ipc |= type == "ipc";
      }
    }
    if ((linux.contains("uidMappings") || linux.contains("gidMappings")) && !joins_userns)
      return unsupported("linux.uidMappings without a user namespace joined by path");
    bool has_mqueue = false;
    for (const auto& m : spec["mounts"]) has_mqueue |= m["destination"] == "/dev/mqueue";
    if (has_mqueue != new_ipc) return unsupported("/dev/mqueue without an IPC namespace of the pod's own");
    const json sysctls = linux.value("sysctl", json::object());
    for (const auto& [k, v] : sysctls.items()) args.insert(args.end(), {"--sysctl", k + "=" + v.get<std::string>()});
    for (const auto& m : linux.value("maskedPaths", json::array())) args.insert(args.end(), {"--mask", m.get<std::string>()});
    for (const auto& m : linux.value("readonlyPaths", json::array())) args.insert(args.end(), {"--readonly", m.get<std::string>()});
    if (spec.contains("hostname")) args.insert(args.end(), {"--hostname", spec["hostname"].get<std::string>()});
    const json& user = p.at("user");
    args.insert(args.end(), {"--uid", std::to_string(user.value("uid", 0u)), "--gid", std::to_string(user.value("gid", 0u))});
    for (const auto& g : user.value("additionalGids", json::array())) args.insert(args.end(), {"--group", std::to_string(g.get<uint32_t>())});
    if (p.contains("oomScoreAdj")) args.insert(args.end(), {"--oom", std::to_string(p["oomScoreAdj"].get<int>())});
    args.push_back("--");
    for (const auto& a : p.at("args")) args.push_back(a.get<std::string>());

    std::string bpf;
    if (linux.contains("seccomp")) {
      auto program = seccomp.get(linux["seccomp"]);
      if (!program.ok()) return program.status().code() == Code::unimplemented ? program.status() : program.status().context("pause spec linux.seccomp");
      if (program->flags != 0) return unsupported("seccomp flags");
      bpf = program->bpf;
    }
    auto limits = limits_of(linux.value("resources", json()));
    if (!limits.ok()) return limits.status();

    // From here on something is made: the cgroup, then the pause.
    std::string dir = cgroup_dir_of(linux.at("cgroupsPath").get<std::string>(), false);
    auto procs = create_cgroup(dir);
    if (!procs.ok()) return procs.status().context("pause cgroup");
    if (Status s = write_cgroup_limits(dir, *limits, host_cgroup_v2()); !s.ok()) return s.context("pause cgroup");
    // No device at all: the runtime's default list allows a few nodes the pause never opens.
    if (!host_cgroup_v2())
      if (FILE* f = std::fopen(("/sys/fs/cgroup/devices" + dir + "/devices.deny").c_str(), "we")) {
        bool ok = std::fputs("a", f) >= 0;
        if (std::fclose(f) != 0 || !ok) return internal_error("pause cgroup: deny devices in " + dir);
      }
    for (const auto& procs_file : *procs) args.insert(args.end() - static_cast<long>(p["args"].size()) - 1, {"--cgroup-procs", procs_file});

    Command command{.argv = args, .stdin_data = bpf, .timeout = std::chrono::seconds(30), .capture_report = true};
    auto r = run_command(command);
    if (!r.ok()) return r.status().context("berth-pause-launch");
    if (std::string why = r->report_value("error"); !why.empty()) return internal_error("berth-pause-launch: " + why);
    pid_t pid = std::atoi(r->report_value("pid").c_str());
    if (!r->success() || pid <= 0)
      return internal_error("berth-pause-launch: " + r->describe(command.timeout) + (r->err.empty() ? "" : ": " + r->err));
    return pid;
  } catch (const json::exception& e) {
    // The spec is build_pause_spec's: a shape it never has is berth's bug, reported, not thrown.
    return internal_error(std::string("pause spec: ") + e.what());
  }
}

}  // namespace berth
