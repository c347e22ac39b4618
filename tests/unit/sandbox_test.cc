// Cgroup paths for both drivers, the pause spec's namespace choices, and the durable records
// (checkpoints, container records) read back from disk, without running anything.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "../../sandbox/pause_launch.h"
#include "../../sandbox/pause_spec.h"
#include "../../sandbox/pod_resources.h"
#include "berth/cgroup_limits.h"
#include "berth/cgroups_path.h"
#include "berth/checksummed_json.h"
#include "berth/container_record.h"
#include "berth/sandbox_checkpoint.h"
#include "berth/test/spec_round_trip.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

namespace v1 = runtime::v1;

TEST(SandboxCgroups, CgroupfsAndSystemdForms) {
  EXPECT_EQ(*cgroups_path_for("/kubepods/besteffort/pod1", "abc", false), "/kubepods/besteffort/pod1/abc");
  EXPECT_EQ(*cgroups_path_for("", "abc", false), "/berth/abc");
  EXPECT_EQ(*cgroups_path_for("/", "abc", false), "/abc");
  EXPECT_EQ(*cgroups_path_for("kubepods-besteffort-pod1.slice", "abc", true),
            "kubepods-besteffort-pod1.slice:berth:abc");
  EXPECT_EQ(*cgroups_path_for("", "abc", true), "system.slice:berth:abc");
  auto bad = cgroups_path_for("/kubepods/pod1", "abc", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a systemd slice"), std::string::npos);
  EXPECT_FALSE(cgroups_path_for("kubepods.slice", "abc", false).ok());
  EXPECT_FALSE(cgroups_path_for("/a/../b", "abc", false).ok());
}

// The pause spec as config.json holds it, checked to read back as written.
nlohmann::json pause_spec_json(const v1::PodSandboxConfig& c, const PauseSpecInputs& in) {
  auto spec = build_pause_spec(c, in);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  if (!spec.ok()) return nullptr;
  test::expect_spec_round_trip(*spec);
  return oci::to_json(*spec);
}

TEST(PauseSpec, NamespacesFollowTheOptions) {
  v1::PodSandboxConfig c;
  c.set_hostname("h");
  auto spec = pause_spec_json(c, {.rootfs = "/r", .netns_path = "/run/netns/x", .cgroups_path = "/p/x"});
  std::set<std::string> types;
  for (const auto& n : spec["linux"]["namespaces"]) types.insert(n["type"].get<std::string>());
  EXPECT_EQ(types, (std::set<std::string>{"mount", "pid", "ipc", "uts", "network"}));
  EXPECT_EQ(spec["hostname"], "h");
  EXPECT_EQ(spec["root"]["readonly"], true);
  // No capability at all: the object is there (without it a runtime keeps its default set).
  EXPECT_EQ(spec["process"]["capabilities"], nlohmann::json::object());
  EXPECT_FALSE(spec["linux"].contains("seccomp"));  // no profile asked for: unconfined
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(v1::NODE);
  spec = pause_spec_json(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  EXPECT_FALSE(spec.contains("hostname"));
  for (const auto& n : spec["linux"]["namespaces"]) EXPECT_NE(n["type"], "network");
  // A privileged pod with a user namespace, sysctls and a seccomp profile: every part berth writes.
  c.mutable_linux()->mutable_security_context()->set_privileged(true);
  (*c.mutable_linux()->mutable_sysctls())["kernel.shmmax"] = "1000";
  c.mutable_linux()->mutable_security_context()->add_supplemental_groups(7);
  spec = pause_spec_json(c, {.rootfs = "/r",
                             .cgroups_path = "/p/x",
                             .userns_path = "/run/userns/x",
                             .uids = {{0, 100000, 65536}},
                             .gids = {{0, 100000, 65536}}});
  EXPECT_GT(spec["process"]["capabilities"]["bounding"].size(), 30u);
  EXPECT_EQ(spec["linux"]["uidMappings"], nlohmann::json::parse(R"([{"containerID":0,"hostID":100000,"size":65536}])"));
  EXPECT_EQ(spec["linux"]["sysctl"]["kernel.shmmax"], "1000");
  EXPECT_EQ(spec["process"]["user"]["additionalGids"], nlohmann::json({7}));
  c.mutable_linux()->mutable_security_context()->set_privileged(false);
  c.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(
      v1::SecurityProfile::RuntimeDefault);
  spec = pause_spec_json(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  EXPECT_EQ(spec["linux"]["seccomp"]["defaultAction"], "SCMP_ACT_ERRNO");
  c.mutable_linux()->mutable_security_context()->add_supplemental_groups(-1);
  auto refused = build_pause_spec(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("supplemental_groups: -1 is not a valid gid"), std::string::npos);
}

TEST(PauseSpec, OverheadAddsToThePodsResourcesButInventsNoLimit) {
  v1::PodSandboxConfig c;
  auto* o = c.mutable_linux()->mutable_overhead();
  o->set_memory_limit_in_bytes(16 << 20);
  o->set_cpu_quota(10000);
  o->set_cpu_shares(100);
  o->set_cpu_period(100000);
  auto spec = pause_spec_json(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  const auto& res = spec["linux"]["resources"];
  EXPECT_FALSE(res.contains("memory"));  // the pod is unlimited: so is it with its overhead
  EXPECT_FALSE(res["cpu"].contains("quota"));
  EXPECT_EQ(res["cpu"]["shares"], 100);
  EXPECT_EQ(res["cpu"]["period"], 100000);
  auto* r = c.mutable_linux()->mutable_resources();
  r->set_memory_limit_in_bytes(64 << 20);
  r->set_cpu_quota(50000);
  r->set_cpu_shares(512);
  auto both_spec = pause_spec_json(c, {.rootfs = "/r", .cgroups_path = "/p/x"});
  const auto& both = both_spec["linux"]["resources"];
  EXPECT_EQ(both["memory"]["limit"], 80 << 20);
  EXPECT_EQ(both["cpu"]["quota"], 60000);
  EXPECT_EQ(both["cpu"]["shares"], 612);
}

// Records on disk may be damaged, or written by another version: with a valid checksum, a member
// of the wrong type is still an error naming the member, and loading quarantines the file.
nlohmann::json record_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(Records, WrongTypedMembersAreErrorsNamingThemAndNeverThrow) {
  test::TempDir dir;
  SandboxCheckpoint cp;
  cp.id = "s1";
  cp.name = "web";
  cp.port_mappings = {{"tcp", 80, 8080, ""}};
  ASSERT_TRUE(write_checkpoint(dir.path(), cp).ok());
  const std::string path = checkpoint_path(dir.path(), "s1");
  ASSERT_TRUE(read_checkpoint(path).ok());
  const nlohmann::json good = record_json(path);

  struct Case {
    const char* pointer;
    nlohmann::json value;
    const char* why;
  } cases[] = {
      {"/metadata/name", 5, "field 'metadata.name': type must be string, but is number"},
      {"/metadata", "web", "field 'metadata': type must be object, but is string"},
      {"/host_network", "no", "field 'host_network': type must be boolean, but is string"},
      {"/privileged", 1, "field 'privileged': type must be boolean, but is number"},
      {"/port_mappings/0/container_port", "80",
       "field 'port_mappings[0].container_port': type must be integer, but is string"},
      {"/port_mappings", "80:8080", "field 'port_mappings': type must be array, but is string"},
      {"/labels", nlohmann::json({{"a", 1}}), "field 'labels.a': type must be string, but is number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    nlohmann::json j = good;
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    ASSERT_TRUE(write_checksummed_json(path, j, "test").ok());
    Result<SandboxCheckpoint> r = internal_error("not run");
    EXPECT_NO_THROW(r = read_checkpoint(path));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::invalid_argument);
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
  }
  LoadedCheckpoints loaded;
  EXPECT_NO_THROW(loaded = load_checkpoints(dir.path(), dir / "quarantine"));
  EXPECT_TRUE(loaded.valid.empty());
  ASSERT_EQ(loaded.quarantined.size(), 1u);
  EXPECT_NE(loaded.quarantined[0].find("field 'labels.a'"), std::string::npos) << loaded.quarantined[0];

  ContainerRecord rec;
  rec.id = "c1";
  rec.config = "";
  rec.message = "exec failed: \xff\xfe";  // a runtime's raw stderr need not be UTF-8
  Status written;
  EXPECT_NO_THROW(written = write_container_record(dir.path(), rec));
  ASSERT_TRUE(written.ok()) << written.message();
  const std::string rpath = container_record_path(dir.path(), "c1");
  auto back = read_container_record(rpath);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->message, "exec failed: \xEF\xBF\xBD\xEF\xBF\xBD");  // each bad byte replaced by U+FFFD
  nlohmann::json j = record_json(rpath);
  j["user"]["uid"] = "0";
  ASSERT_TRUE(write_checksummed_json(rpath, j, "test").ok());
  Result<ContainerRecord> bad = internal_error("not run");
  EXPECT_NO_THROW(bad = read_container_record(rpath));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("field 'user.uid': type must be unsigned integer, but is string"),
            std::string::npos)
      << bad.status().message();
}

// The envelope every record shares: a version or checksum of another type is the file's error,
// never an exception.
TEST(Records, AWrongTypedVersionOrChecksumIsAnError) {
  test::TempDir dir;
  SandboxCheckpoint cp;
  cp.id = "s2";
  cp.name = "web";
  ASSERT_TRUE(write_checkpoint(dir.path(), cp).ok());
  const std::string path = checkpoint_path(dir.path(), "s2");
  const nlohmann::json good = record_json(path);
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* why;
  } cases[] = {
      {"version", "1", "unsupported version \"1\""},
      {"version", nullptr, "unsupported version null"},
      {"version", 1.5, "unsupported version 1.5"},
      {"checksum", 5, "no checksum"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key + (" = " + c.value.dump()));
    nlohmann::json j = good;
    j[c.key] = c.value;
    { std::ofstream(path) << j.dump(); }
    Result<SandboxCheckpoint> r = internal_error("not run");
    EXPECT_NO_THROW(r = read_checkpoint(path));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
  }
}

// The pause's spec as the launcher takes it: a member of another type does not read (INVALID_ARGUMENT
// naming the field), a part the pause needs missing is INTERNAL, and what only the runtime applies
// is UNIMPLEMENTED, all before anything is made (no cgroup, no launcher run: the launcher here
// does not exist).
TEST(PauseLaunch, ASpecThatDoesNotReadIsAnErrorNamingTheField) {
  using nlohmann::json;
  const json spec = {
      {"ociVersion", "1.0.2"},
      {"process", {{"user", {{"uid", 0}, {"gid", 0}}}, {"args", {"/pause"}}, {"cwd", "/"}, {"noNewPrivileges", true}}},
      {"root", {{"path", "/nonexistent/rootfs"}, {"readonly", true}}},
      {"mounts",
       json::array({{{"destination", "/dev/shm"}, {"source", "/nonexistent/shm"}}, {{"destination", "/proc"}}})},
      {"linux", {{"namespaces", json::array({{{"type", "pid"}}})}, {"cgroupsPath", "/berth-unit-pause-launch/x"}}}};
  struct Case {
    const char* pointer;
    json value;
    Code code;
    const char* why;
  } cases[] = {
      {"/process/args", 5, Code::invalid_argument, "field 'process.args': type must be array, but is number"},
      {"/process/user/uid", -1, Code::invalid_argument, "field 'process.user.uid': integer -1 out of range"},
      {"/process/oomScoreAdj", "low", Code::invalid_argument,
       "field 'process.oomScoreAdj': type must be integer, but is string"},
      {"/mounts/0/destination", 1, Code::invalid_argument,
       "field 'mounts[0].destination': type must be string, but is number"},
      {"/linux/namespaces/0/type", nullptr, Code::invalid_argument,
       "field 'linux.namespaces[0].type': type must be string, but is null"},
      {"/linux/sysctl", json({{"net.core.somaxconn", 5}}), Code::invalid_argument,
       "field 'linux.sysctl.net.core.somaxconn'"},
      {"/root", "/", Code::invalid_argument, "field 'root': type must be object, but is string"},
      {"/process/args", json::array(), Code::internal, "field 'process.args': empty"},
      {"/linux/cgroupsPath", nullptr, Code::internal, "field 'linux.cgroupsPath': missing"},
      {"/process/capabilities", json({{"bounding", {"CAP_KILL"}}}), Code::unimplemented, "capabilities"},
      {"/root/readonly", false, Code::unimplemented, "a writable root"},
      {"/process/ioPriority", json({{"class", "IOPRIO_CLASS_IDLE"}}), Code::unimplemented, "process.ioPriority"},
      {"/linux/resources", json({{"pids", {{"limit", 5}}}}), Code::unimplemented, "linux.resources.pids"},
      {"/hooks", json({{"prestart", {{{"path", "/bin/true"}}}}}), Code::unimplemented, "hooks"},
  };
  SeccompProgramCache seccomp;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    json bad = spec;
    bad[json::json_pointer(c.pointer)] = c.value;
    Result<pid_t> r = internal_error("not run");
    EXPECT_NO_THROW({
      auto typed = oci::spec_from_json(bad, "pause spec");
      r = typed.ok() ? launch_pause("/nonexistent/berth-pause-launch", *typed, nullptr, seccomp) : typed.status();
    });
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << r.status().message();
    EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/fs/cgroup", ec))
    EXPECT_FALSE(std::filesystem::exists(e.path() / "berth-unit-pause-launch")) << e.path();
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/berth-unit-pause-launch"));
}

// UpdatePodSandboxResources: the overhead adds to each limit the resources set; fields are checked
// by name.
TEST(PodResources, OverheadAddsToTheLimitsTheResourcesSet) {
  v1::LinuxContainerResources overhead, resources;
  overhead.set_memory_limit_in_bytes(10);
  overhead.set_cpu_quota(5);
  overhead.set_cpu_shares(2);
  resources.set_memory_limit_in_bytes(100);
  resources.set_cpu_quota(50);
  resources.set_cpu_period(1000);
  resources.set_cpuset_cpus("0-1");
  auto l = pod_cgroup_limits(overhead, resources);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->memory, 110);
  EXPECT_EQ(l->cpu_quota, 55);
  EXPECT_EQ(l->cpu_period, 1000);
  EXPECT_EQ(l->cpu_shares, 0);  // unset by the resources: the overhead alone limits nothing
  EXPECT_EQ(l->cpuset_cpus, "0-1");
  EXPECT_EQ(cgroup_limits_json(*l)["memory_limit_in_bytes"], 110);
  resources.set_cpu_quota(-1);
  EXPECT_EQ(pod_cgroup_limits(overhead, resources)->cpu_quota, -1);  // no limit stays no limit

  struct Case {
    std::function<void(v1::LinuxContainerResources&, v1::LinuxContainerResources&)> set;
    const char* why;
  } cases[] = {
      {[](auto&, auto& r) { r.set_memory_limit_in_bytes(-1); },
       "resources.memory_limit_in_bytes: must not be negative"},
      {[](auto& o, auto&) { o.set_cpu_shares(-2); }, "overhead.cpu_shares: must not be negative"},
      {[](auto&, auto& r) { r.set_cpu_quota(-5); }, "resources.cpu_quota: must be -1"},
      {[](auto&, auto& r) { r.set_oom_score_adj(5); }, "resources.oom_score_adj: a pod cgroup has no OOM score"},
      {[](auto& o, auto& r) {
         o.set_cpu_period(10);
         r.set_cpu_period(20);
       },
       "overhead.cpu_period: differs"},
      {[](auto&, auto& r) {
         r.set_memory_limit_in_bytes(10);
         r.set_memory_swap_limit_in_bytes(5);
       },
       "resources.memory_swap_limit_in_bytes: smaller"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    v1::LinuxContainerResources o, r;
    c.set(o, r);
    auto bad = pod_cgroup_limits(o, r);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), Code::invalid_argument);
    EXPECT_NE(bad.status().message().find(c.why), std::string::npos) << bad.status().message();
  }
}

// The files each cgroup version takes, on copies of the kernel's files; a memory limit below the
// current use is refused before anything is written.
TEST(PodResources, CgroupFilesOfV1AndV2) {
  test::TempDir root;
  auto make = [&](const std::string& dir, std::initializer_list<std::pair<const char*, const char*>> files) {
    std::filesystem::create_directories(root / dir);
    for (auto [name, text] : files) test::write_file(root / (dir + "/" + name), text);
  };
  make("pod", {{"memory.current", "5000\n"},
               {"memory.max", "max\n"},
               {"memory.swap.max", "max\n"},
               {"cpu.max", "max 100000\n"},
               {"cpu.weight", "100\n"},
               {"cpuset.cpus", "\n"},
               {"hugetlb.2MB.max", "max\n"},
               {"io.weight", "default 100\n"}});
  CgroupLimits l{.cpu_shares = 1024,
                 .cpu_quota = 50000,
                 .cpu_period = 100000,
                 .memory = 8192,
                 .memory_swap = 16384,
                 .cpuset_cpus = "0",
                 .hugepages = {{"2MB", 4194304}},
                 .unified = {{"io.weight", "default 50"}}};
  Status s = write_cgroup_limits("/pod", l, true, root.path());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(test::read_file(root / "pod/memory.max"), "8192");
  EXPECT_EQ(test::read_file(root / "pod/memory.swap.max"), "8192");
  EXPECT_EQ(test::read_file(root / "pod/cpu.max"), "50000 100000");
  EXPECT_EQ(test::read_file(root / "pod/cpu.weight"), "39");
  EXPECT_EQ(test::read_file(root / "pod/cpuset.cpus"), "0");
  EXPECT_EQ(test::read_file(root / "pod/hugetlb.2MB.max"), "4194304");
  EXPECT_EQ(test::read_file(root / "pod/io.weight"), "default 50");
  Status below = write_cgroup_limits("/pod", {.memory = 4096}, true, root.path());
  EXPECT_EQ(below.code(), Code::failed_precondition);
  EXPECT_EQ(below.message(), "memory limit 4096 is below the current memory use 5000 of cgroup /pod");
  EXPECT_EQ(write_cgroup_limits("/pod", {.unified = {{"../escape", "1"}}}, true, root.path()).code(),
            Code::invalid_argument);
  // Only controllers' files: never cgroup.procs, cgroup.kill or cgroup.subtree_control.
  for (const char* core : {"cgroup.procs", "cgroup.kill", "cgroup.subtree_control", "noctrl"})
    EXPECT_EQ(write_cgroup_limits("/pod", {.unified = {{core, "1"}}}, true, root.path()).code(), Code::invalid_argument)
        << core;
  // memory.max through unified gets the same check against the current use.
  EXPECT_EQ(write_cgroup_limits("/pod", {.unified = {{"memory.max", "4096"}}}, true, root.path()).code(),
            Code::failed_precondition);
  EXPECT_EQ(write_cgroup_limits("relative", {}, true, root.path()).code(), Code::invalid_argument);

  make("memory/pod", {{"memory.usage_in_bytes", "5000\n"},
                      {"memory.limit_in_bytes", "9223372036854771712\n"},
                      {"memory.memsw.limit_in_bytes", "8192\n"}});
  make("cpu/pod", {{"cpu.cfs_period_us", "100000\n"}, {"cpu.cfs_quota_us", "-1\n"}, {"cpu.shares", "1024\n"}});
  make("cpuset/pod", {{"cpuset.cpus", "0-1\n"}});
  make("hugetlb/pod", {{"hugetlb.2MB.limit_in_bytes", "0\n"}});
  // memory above the current memsw limit: memsw is raised first (the kernel refuses the other order).
  s = write_cgroup_limits("/pod", {.cpu_shares = 512, .cpu_quota = 20000, .memory = 12288, .memory_swap = 24576}, false,
                          root.path());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(test::read_file(root / "memory/pod/memory.limit_in_bytes"), "12288");
  EXPECT_EQ(test::read_file(root / "memory/pod/memory.memsw.limit_in_bytes"), "24576");
  EXPECT_EQ(test::read_file(root / "cpu/pod/cpu.cfs_quota_us"), "20000");
  EXPECT_EQ(test::read_file(root / "cpu/pod/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(test::read_file(root / "cpu/pod/cpu.shares"), "512");
  EXPECT_EQ(write_cgroup_limits("/pod", {.unified = {{"io.weight", "1"}}}, false, root.path()).message(),
            "unified: needs a cgroup v2 host; this host runs cgroup v1");
  EXPECT_EQ(write_cgroup_limits("/pod", {.memory = 1000}, false, root.path()).code(), Code::failed_precondition);
  // Without swap accounting: no swap (swap == memory) is fine, a real swap limit is refused.
  std::filesystem::remove(root / "memory/pod/memory.memsw.limit_in_bytes");
  EXPECT_TRUE(write_cgroup_limits("/pod", {.memory = 16384, .memory_swap = 16384}, false, root.path()).ok());
  EXPECT_EQ(write_cgroup_limits("/pod", {.memory = 16384, .memory_swap = 32768}, false, root.path()).code(),
            Code::failed_precondition);
}

}  // namespace
}  // namespace berth
