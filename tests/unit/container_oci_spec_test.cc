// build_container_spec on its own, on a temp rootfs: namespaces joined from the pod, env and user
// defaults, mounts, masked paths as given, privileged, resources, AppArmor choices, signals and the
// cgroup directory forms.
#include <gtest/gtest.h>

#include <cerrno>
#include <set>

#include <filesystem>

#include "../../container/container_linux_spec.h"
#include "../../container/exec_helper.h"
#include "berth/cgroups_path.h"
#include "berth/container_spec.h"
#include "berth/seccomp_profile.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

namespace v1 = runtime::v1;
using nlohmann::json;
using test::TempDir;

class ContainerOciSpec : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root_ / "etc");
    test::write_file(root_ / "etc/passwd", "root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n");
    test::write_file(root_ / "etc/group", "root:x:0:\napp:x:1000:\nvideo:x:44:app\n");
    pod_ = {"pod1",
            4242,
            "/run/berth/netns/pod1",
            false,
            false,
            false,
            "/run/berth/sandboxes/pod1",
            "/run/berth/sandboxes/pod1/shm",
            "web-0",
            "web-0",
            "default",
            "uid-1",
            false};
    image_ = {"busybox", {{"/bin/sh"}, {"-c", "true"}, {"PATH=/bin", "A=1"}, "/srv", "app"}, "SIGQUIT"};
    in_ = {.id = "c1", .rootfs = root_.path(), .cgroups_path = "/kubepods/pod1/c1", .mountinfo = ""};
  }
  v1::ContainerConfig config() {
    v1::ContainerConfig c;
    c.mutable_metadata()->set_name("app");
    c.mutable_image()->set_image("busybox");
    return c;
  }
  Result<ContainerSpec> build(const v1::ContainerConfig& c) { return build_container_spec(c, pod_, image_, in_); }

  TempDir root_;
  PodForContainer pod_;
  ImageForContainer image_;
  ContainerSpecInputs in_;
};

TEST_F(ContainerOciSpec, JoinsThePodsNamespacesAndUsesImageDefaults) {
  auto c = config();
  auto* kv = c.add_envs();
  kv->set_key("A");
  kv->set_value("2");
  auto spec = build(c);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const json& s = spec->spec;
  EXPECT_EQ(s["process"]["args"], json({"/bin/sh", "-c", "true"}));
  EXPECT_EQ(s["process"]["env"], json({"HOSTNAME=web-0", "PATH=/bin", "A=2"}));
  EXPECT_EQ(s["process"]["cwd"], "/srv");
  EXPECT_EQ(s["process"]["user"]["uid"], 1000);
  EXPECT_EQ(s["process"]["user"]["additionalGids"], json({44}));
  json ns = s["linux"]["namespaces"];
  EXPECT_EQ(ns[0], json({{"type", "mount"}}));
  EXPECT_EQ(ns[1], json({{"type", "network"}, {"path", "/run/berth/netns/pod1"}}));
  EXPECT_EQ(ns[2], json({{"type", "uts"}, {"path", "/proc/4242/ns/uts"}}));
  EXPECT_EQ(ns[3], json({{"type", "ipc"}, {"path", "/proc/4242/ns/ipc"}}));
  EXPECT_EQ(ns[4], json({{"type", "pid"}, {"path", "/proc/4242/ns/pid"}}));  // POD: the pause's
  EXPECT_FALSE(s.contains("hostname"));                                      // the pod's UTS namespace already has it
  EXPECT_EQ(s["linux"]["cgroupsPath"], "/kubepods/pod1/c1");
  EXPECT_EQ(s["annotations"]["io.kubernetes.cri.sandbox-id"], "pod1");
  bool shm = false, resolv = false;
  for (const auto& m : s["mounts"]) {
    if (m["destination"] == "/dev/shm") shm = m["source"] == pod_.shm_path;
    if (m["destination"] == "/etc/resolv.conf") resolv = m["source"] == pod_.files_dir + "/resolv.conf";
  }
  EXPECT_TRUE(shm && resolv);
  // No masked or read-only paths asked for: berth's defaults, never an unmasked host /proc.
  for (const char* p : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sysrq-trigger", "/sys/firmware",
                        "/sys/devices/virtual/powercap"})
    EXPECT_NE(std::find(s["linux"]["maskedPaths"].begin(), s["linux"]["maskedPaths"].end(), p),
              s["linux"]["maskedPaths"].end())
        << p;
  EXPECT_EQ(s["linux"]["readonlyPaths"],
            json({"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}));
  // A cgroup v1 host: the host's cgroup namespace, as runtimes keep it there.
  for (const auto& n : ns) EXPECT_NE(n["type"], "cgroup");
}

TEST_F(ContainerOciSpec, MaskedPathsAsAskedAndACgroupNamespaceOnCgroupV2) {
  auto c = config();
  auto* sc = c.mutable_linux()->mutable_security_context();
  sc->add_masked_paths("/proc/keys");
  in_.cgroup_v2 = true;
  auto spec = build(c);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const json& s = spec->spec;
  EXPECT_EQ(s["linux"]["maskedPaths"], json({"/proc/keys"}));
  EXPECT_EQ(s["linux"]["readonlyPaths"].size(), 5u);  // that list left empty: the defaults
  bool cgroupns = false;
  for (const auto& n : s["linux"]["namespaces"]) cgroupns |= n["type"] == "cgroup" && !n.contains("path");
  EXPECT_TRUE(cgroupns);
}

TEST_F(ContainerOciSpec, PidNamespaceModesAndHostNamespaces) {
  auto c = config();
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  EXPECT_EQ(build(c)->spec["linux"]["namespaces"].back(), json({{"type", "pid"}}));
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::TARGET);
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_target_id("other");
  EXPECT_EQ(build(c).status().code(), Code::invalid_argument);
  in_.target_pid = 777;
  EXPECT_EQ(build(c)->spec["linux"]["namespaces"].back(), json({{"type", "pid"}, {"path", "/proc/777/ns/pid"}}));
  pod_.host_network = pod_.host_ipc = pod_.host_pid = true;
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::POD);
  EXPECT_EQ(build(c)->spec["linux"]["namespaces"], json({{{"type", "mount"}}}));
}

TEST_F(ContainerOciSpec, PrivilegedNeedsAPrivilegedPod) {
  auto c = config();
  c.mutable_linux()->mutable_security_context()->set_privileged(true);
  auto refused = build(c);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("privileged"), std::string::npos);
  pod_.privileged = true;
  auto spec = build(c);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_FALSE(spec->spec["linux"].contains("seccomp"));
  EXPECT_FALSE(spec->spec["linux"].contains("maskedPaths"));
  EXPECT_GT(spec->spec["process"]["capabilities"]["bounding"].size(), 30u);
  EXPECT_EQ(spec->spec["linux"]["resources"]["devices"], json({{{"allow", true}, {"access", "rwm"}}}));
}

// The names RuntimeDefault allows outright (it refuses the rest), and whether clone is held to no
// namespaces.
std::pair<std::set<std::string>, bool> runtime_default_of(const json& spec) {
  std::set<std::string> allowed;
  bool clone_checked = false;
  for (const auto& rule : spec["linux"]["seccomp"]["syscalls"]) {
    if (rule["names"] == json({"clone"}) && rule.contains("args")) clone_checked = true;
    if (rule["action"] == "SCMP_ACT_ALLOW" && !rule.contains("args"))
      for (const auto& n : rule["names"]) allowed.insert(n.get<std::string>());
  }
  return {allowed, clone_checked};
}

TEST_F(ContainerOciSpec, RuntimeDefaultSeccompFollowsTheCapabilities) {
  auto c = config();
  c.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(
      v1::SecurityProfile::RuntimeDefault);
  auto spec = build(c);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->spec["linux"]["seccomp"]["defaultAction"], "SCMP_ACT_ERRNO");
  auto [allowed, clone_checked] = runtime_default_of(spec->spec);
  for (const char* n : {"mount", "unshare", "setns", "reboot", "init_module", "kexec_load", "keyctl", "bpf"})
    EXPECT_EQ(allowed.count(n), 0u) << n;
  EXPECT_EQ(allowed.count("read"), 1u);
  EXPECT_EQ(allowed.count("chroot"), 1u);  // CAP_SYS_CHROOT is in the default set
  EXPECT_TRUE(clone_checked);
  bool clone3_enosys = false;
  for (const auto& rule : spec->spec["linux"]["seccomp"]["syscalls"])
    if (rule["names"] == json({"clone3"})) clone3_enosys = rule["errnoRet"] == ENOSYS;
  EXPECT_TRUE(clone3_enosys);

  // CAP_SYS_ADMIN and CAP_SYS_BOOT allow what they stand for; the rest stays refused.
  c.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities("SYS_ADMIN");
  c.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities("SYS_BOOT");
  spec = build(c);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto [admin_allowed, admin_clone_checked] = runtime_default_of(spec->spec);
  for (const char* n : {"mount", "unshare", "setns", "umount2", "reboot", "clone", "clone3"})
    EXPECT_EQ(admin_allowed.count(n), 1u) << n;
  for (const char* n : {"init_module", "kexec_load", "keyctl"}) EXPECT_EQ(admin_allowed.count(n), 0u) << n;
  EXPECT_FALSE(admin_clone_checked);
}

TEST_F(ContainerOciSpec, ResourcesAndBadInput) {
  v1::LinuxContainerResources r;
  r.set_cpu_shares(512);
  r.set_cpu_quota(20000);
  r.set_cpu_period(100000);
  r.set_memory_limit_in_bytes(1 << 30);
  r.set_cpuset_cpus("0-1");
  auto* hp = r.add_hugepage_limits();
  hp->set_page_size("2MB");
  hp->set_limit(4 << 20);
  auto res = oci_resources(r, false);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ((*res)["cpu"], json({{"shares", 512}, {"quota", 20000}, {"period", 100000}, {"cpus", "0-1"}}));
  EXPECT_EQ((*res)["memory"]["limit"], 1 << 30);
  EXPECT_EQ((*res)["hugepageLimits"][0]["pageSize"], "2MB");
  r.mutable_unified()->insert({"memory.high", "100M"});
  EXPECT_EQ(oci_resources(r, false).status().code(), Code::invalid_argument);
  EXPECT_EQ((*oci_resources(r, true))["unified"]["memory.high"], "100M");
  r.set_memory_swap_limit_in_bytes(1 << 20);
  EXPECT_NE(oci_resources(r, true).status().message().find("memory_swap_limit_in_bytes"), std::string::npos);

  auto c = config();
  c.mutable_linux()->mutable_resources()->set_oom_score_adj(-2000);
  EXPECT_NE(build(c).status().message().find("oom_score_adj"), std::string::npos);
  // A relative working dir from the image (the request's is refused by the request checks).
  c = config();
  image_.process.working_dir = "relative";
  EXPECT_NE(build(c).status().message().find("config.WorkingDir 'relative'"), std::string::npos);
  image_.process.working_dir.clear();
  c = config();
  c.mutable_linux()->mutable_resources()->set_oom_score_adj(-999);
  in_.min_oom_score_adj = -500;  // berthd may not go below its own
  EXPECT_EQ(build(c)->spec["process"]["oomScoreAdj"], -500);
}

TEST_F(ContainerOciSpec, AppArmorChoices) {
  v1::LinuxContainerSecurityContext sc;
  EXPECT_EQ(*apparmor_profile(sc, false, ""), "");                           // no AppArmor here: none
  EXPECT_EQ(*apparmor_profile(sc, true, "berth-default"), "berth-default");  // RuntimeDefault
  sc.mutable_apparmor()->set_profile_type(v1::SecurityProfile::Unconfined);
  EXPECT_EQ(*apparmor_profile(sc, true, "berth-default"), "unconfined");
  sc.mutable_apparmor()->set_profile_type(v1::SecurityProfile::Localhost);
  sc.mutable_apparmor()->set_localhost_ref("my-profile");
  EXPECT_EQ(*apparmor_profile(sc, true, "berth-default"), "my-profile");
  auto refused = apparmor_profile(sc, false, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("AppArmor is not enabled"), std::string::npos);
  v1::LinuxContainerSecurityContext legacy;
  legacy.set_apparmor_profile("localhost/old-style");
  EXPECT_EQ(*apparmor_profile(legacy, true, ""), "old-style");
}

// A bundle's config.json is read back from disk for exec: one without a process object is an
// error, not an exception out of at() or operator[].
TEST(ExecProcess, DamagedSpecIsAnErrorAndNeverThrows) {
  json good = {{"process", {{"args", {"sh"}}, {"cwd", "/"}, {"consoleSize", {{"height", 1}, {"width", 1}}}}}};
  auto p = exec_process(good, {"ls", "-l"}, true);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)["args"], json({"ls", "-l"}));
  EXPECT_EQ((*p)["terminal"], true);
  EXPECT_EQ((*p)["cwd"], "/");
  EXPECT_FALSE(p->contains("consoleSize"));
  for (const json& bad :
       {json(5), json::object(), json({{"process", "sh"}}), json({{"process", json::array()}}), json()}) {
    SCOPED_TRACE(bad.dump());
    Result<json> r = internal_error("not run");
    EXPECT_NO_THROW(r = exec_process(bad, {"ls"}, false));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("field 'process'"), std::string::npos) << r.status().message();
  }
}

// berth-exec's request comes from config.json read back from disk: a member of another type is an
// error naming it (never an exception); a null one is absent, as the reader takes it.
TEST(ExecHelperRequest, WrongTypedMembersAreErrorsNamingThem) {
  const json good = {{"process", {{"args", {"sh"}}, {"cwd", "/"}, {"user", {{"uid", 0}, {"gid", 0}}}}}};
  SeccompProgramCache seccomp;
  auto request = [&](const json& spec) {
    Result<std::string> r = internal_error("not run");
    EXPECT_NO_THROW(r = exec_helper_request(spec, {"ls"}, {}, seccomp));
    return r;
  };
  ASSERT_TRUE(request(good).ok()) << request(good).status().message();
  struct Case {
    const char* pointer;
    json value;
    const char* why;
  } cases[] = {
      {"/process/rlimits", json::array({5}),
       "field 'config.json process.rlimits[0]': type must be object, but is number"},
      {"/process/user/umask", "022",
       "field 'config.json process.user.umask': type must be unsigned integer, but is string"},
      {"/process/oomScoreAdj", "low", "field 'config.json process.oomScoreAdj': type must be integer, but is string"},
      {"/process", "sh", "field 'process': type must be object, but is string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    json bad = good;
    bad[json::json_pointer(c.pointer)] = c.value;
    auto r = request(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::internal);
    EXPECT_NE(r.status().message().find(c.why), std::string::npos) << r.status().message();
  }
  for (const char* pointer : {"/process/user/umask", "/process/oomScoreAdj", "/linux/seccomp"}) {
    json absent = good;
    absent[json::json_pointer(pointer)] = nullptr;
    EXPECT_TRUE(request(absent).ok()) << pointer;
  }
  json linux = good;
  linux["linux"] = 5;  // no seccomp section to compile
  EXPECT_TRUE(request(linux).ok());
}

// A Localhost seccomp profile is a file from outside: its top-level members are checked.
TEST(SeccompLocalhost, WrongTypedMembersAreErrorsNamingThem) {
  TempDir dir;
  auto section = [&](const std::string& text) {
    test::write_file(dir / "profile.json", text);
    SeccompRequest req{
        .kind = SeccompKind::localhost, .localhost_path = dir / "profile.json", .field = "linux.seccomp"};
    Result<std::optional<json>> r = internal_error("not run");
    EXPECT_NO_THROW(r = seccomp_section(req));
    return r;
  };
  auto ok = section(R"({"defaultAction":"SCMP_ACT_ERRNO","syscalls":[{"names":["read"],"action":"SCMP_ACT_ALLOW"}]})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((**ok)["defaultAction"], "SCMP_ACT_ERRNO");
  for (auto [text, why] :
       {std::pair{R"({"defaultAction":5})", "field 'defaultAction': type must be string, but is number"},
        {R"({"defaultAction":"SCMP_ACT_ALLOW","syscalls":{}})", "field 'syscalls': type must be array, but is object"},
        {R"({"defaultAction":"SCMP_ACT_ALLOW","architectures":"x86"})", "field 'architectures': type must be array"},
        {R"([1])", "no defaultAction"}}) {
    SCOPED_TRACE(text);
    auto r = section(text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::invalid_argument);
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
}

TEST(ContainerSignals, NamesNumbersAndRealtime) {
  EXPECT_EQ(signal_number("SIGTERM"), 15);
  EXPECT_EQ(signal_number("KILL"), 9);
  EXPECT_EQ(signal_number("3"), 3);
  EXPECT_EQ(signal_number("SIGRTMIN+2"), SIGRTMIN + 2);
  EXPECT_EQ(signal_number("SIGRTMAXMINUS1"), SIGRTMAX - 1);
  EXPECT_EQ(signal_number("SIGNOPE"), 0);
}

TEST(CgroupDirs, CgroupfsAndSystemdUnits) {
  EXPECT_EQ(cgroup_dir_of("/kubepods/pod1/c1", false), "/kubepods/pod1/c1");
  EXPECT_EQ(cgroup_dir_of("kubepods-besteffort-pod1.slice:berth:c1", true),
            "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/berth-c1.scope");
  EXPECT_EQ(cgroup_dir_of("system.slice:berth:c1", true), "/system.slice/berth-c1.scope");
}

}  // namespace
}  // namespace berth
