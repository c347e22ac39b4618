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
#include "berth/test/spec_round_trip.h"
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
  // Every spec built here is checked to read back as it was written.
  Result<ContainerSpec> build(const v1::ContainerConfig& c) {
    auto spec = build_container_spec(c, pod_, image_, in_);
    if (spec.ok()) test::expect_spec_round_trip(spec->spec);
    return spec;
  }
  // The spec as config.json holds it.
  json written(const v1::ContainerConfig& c) {
    auto spec = build(c);
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    return spec.ok() ? oci::to_json(spec->spec) : json();
  }

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
  const json s = oci::to_json(spec->spec);
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
  const json s = oci::to_json(spec->spec);
  EXPECT_EQ(s["linux"]["maskedPaths"], json({"/proc/keys"}));
  EXPECT_EQ(s["linux"]["readonlyPaths"].size(), 5u);  // that list left empty: the defaults
  bool cgroupns = false;
  for (const auto& n : s["linux"]["namespaces"]) cgroupns |= n["type"] == "cgroup" && !n.contains("path");
  EXPECT_TRUE(cgroupns);
}

TEST_F(ContainerOciSpec, PidNamespaceModesAndHostNamespaces) {
  auto c = config();
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  EXPECT_EQ(written(c)["linux"]["namespaces"].back(), json({{"type", "pid"}}));
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::TARGET);
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_target_id("other");
  EXPECT_EQ(build(c).status().code(), Code::invalid_argument);
  in_.target_pid = 777;
  EXPECT_EQ(written(c)["linux"]["namespaces"].back(), json({{"type", "pid"}, {"path", "/proc/777/ns/pid"}}));
  pod_.host_network = pod_.host_ipc = pod_.host_pid = true;
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::POD);
  EXPECT_EQ(written(c)["linux"]["namespaces"], json({{{"type", "mount"}}}));
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
  EXPECT_FALSE(oci::to_json(spec->spec)["linux"].contains("seccomp"));
  EXPECT_FALSE(oci::to_json(spec->spec)["linux"].contains("maskedPaths"));
  EXPECT_GT(oci::to_json(spec->spec)["process"]["capabilities"]["bounding"].size(), 30u);
  EXPECT_EQ(oci::to_json(spec->spec)["linux"]["resources"]["devices"], json({{{"allow", true}, {"access", "rwm"}}}));
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
  EXPECT_EQ(oci::to_json(spec->spec)["linux"]["seccomp"]["defaultAction"], "SCMP_ACT_ERRNO");
  auto [allowed, clone_checked] = runtime_default_of(oci::to_json(spec->spec));
  for (const char* n : {"mount", "unshare", "setns", "reboot", "init_module", "kexec_load", "keyctl", "bpf"})
    EXPECT_EQ(allowed.count(n), 0u) << n;
  EXPECT_EQ(allowed.count("read"), 1u);
  EXPECT_EQ(allowed.count("chroot"), 1u);  // CAP_SYS_CHROOT is in the default set
  EXPECT_TRUE(clone_checked);
  bool clone3_enosys = false;
  const json s = oci::to_json(spec->spec);
  for (const auto& rule : s["linux"]["seccomp"]["syscalls"])
    if (rule["names"] == json({"clone3"})) clone3_enosys = rule["errnoRet"] == ENOSYS;
  EXPECT_TRUE(clone3_enosys);

  // CAP_SYS_ADMIN and CAP_SYS_BOOT allow what they stand for; the rest stays refused.
  c.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities("SYS_ADMIN");
  c.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities("SYS_BOOT");
  spec = build(c);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto [admin_allowed, admin_clone_checked] = runtime_default_of(oci::to_json(spec->spec));
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
  const json written_res = oci::to_json(*res);
  EXPECT_EQ(written_res["cpu"], json({{"shares", 512}, {"quota", 20000}, {"period", 100000}, {"cpus", "0-1"}}));
  EXPECT_EQ(written_res["memory"]["limit"], 1 << 30);
  EXPECT_EQ(written_res["hugepageLimits"][0]["pageSize"], "2MB");
  r.mutable_unified()->insert({"memory.high", "100M"});
  EXPECT_EQ(oci_resources(r, false).status().code(), Code::invalid_argument);
  EXPECT_EQ(oci::to_json(*oci_resources(r, true))["unified"]["memory.high"], "100M");
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
  EXPECT_EQ(written(c)["process"]["oomScoreAdj"], -500);
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

// The process runc exec runs: the container's, with the command's args and terminal; a console
// size kept from the container's own does not follow.
TEST(ExecProcess, TheContainersProcessWithTheCommand) {
  auto spec = oci::spec_from_json(
      {{"process", {{"args", {"sh"}}, {"cwd", "/"}, {"consoleSize", {{"height", 1}, {"width", 1}}}}}});
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto p = exec_process(*spec, {"ls", "-l"}, true);
  ASSERT_TRUE(p.ok()) << p.status().message();
  json j = oci::to_json(*p);
  EXPECT_EQ(j["args"], json({"ls", "-l"}));
  EXPECT_EQ(j["terminal"], true);
  EXPECT_EQ(j["cwd"], "/");
  EXPECT_FALSE(j.contains("consoleSize"));
  auto none = exec_process(oci::Spec{}, {"ls"}, false);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::internal);
  EXPECT_NE(none.status().message().find("field 'process': missing"), std::string::npos);
}

// berth-exec's request applies every process field the spec type models; one it does not (kept in
// `unknown`) sends the exec through the runtime.
TEST(ExecHelperRequest, WhatItDoesNotApplyGoesThroughTheRuntime) {
  SeccompProgramCache seccomp;
  auto request = [&](const json& spec) {
    auto typed = oci::spec_from_json(spec);
    EXPECT_TRUE(typed.ok()) << typed.status().message();
    return typed.ok() ? exec_helper_request(*typed, {"ls"}, {}, seccomp) : Result<std::string>(typed.status());
  };
  const json good = {{"process",
                      {{"args", {"sh"}},
                       {"cwd", "/"},
                       {"user", {{"uid", 0}, {"gid", 0}, {"umask", 18}}},
                       {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}}},
                       {"oomScoreAdj", -5},
                       {"consoleSize", {{"height", 1}, {"width", 1}}}}}};
  ASSERT_TRUE(request(good).ok()) << request(good).status().message();
  for (const char* pointer :
       {"/process/ioPriority", "/process/user/username", "/process/terminal", "/process/rlimits/0/type"}) {
    SCOPED_TRACE(pointer);
    json other = good;
    other[json::json_pointer(pointer)] = std::string(pointer) == "/process/terminal" ? json(true) : json("x");
    auto r = request(other);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::unimplemented) << r.status().message();
  }
  EXPECT_EQ(exec_helper_request(oci::Spec{}, {"ls"}, {}, seccomp).status().code(), Code::internal);
}

}  // namespace
}  // namespace berth
