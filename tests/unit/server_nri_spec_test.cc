// A plugins' merged NRI adjustment written into a container's OCI spec (server/nri_spec.h): each
// kind berth applies lands where the OCI runtime reads it, removals remove, and what berth does
// not apply (or the CRI keeps from plugins) is refused naming the field, the spec then unused.
#include <gtest/gtest.h>

#include "../../server/nri_spec.h"

namespace berth {
namespace {

oci::Spec base_spec() {
  oci::Spec s;
  s.process.emplace();
  s.process->args = {"/bin/sh"};
  s.process->env = {"PATH=/bin", "SECRET=1"};
  s.mounts.push_back({"/data", "bind", "/host/data", {"rbind"}, {}, {}, nlohmann::json::object()});
  s.linux.emplace();
  return s;
}

TEST(NriSpec, EachKindOfAdjustmentLandsInTheSpec) {
  nri_api::ContainerAdjustment a;
  (*a.mutable_annotations())["nri.example/x"] = "1";
  auto* env = a.add_env();
  env->set_key("INJECTED");
  env->set_value("yes");
  a.add_env()->set_key("-SECRET");
  a.add_mounts()->set_destination("-/data");
  auto* m = a.add_mounts();
  m->set_destination("/nri");
  m->set_type("bind");
  m->set_source("/host/nri");
  m->add_options("ro");
  auto* r = a.add_rlimits();
  r->set_type("RLIMIT_NOFILE");
  r->set_hard(4096);
  r->set_soft(1024);
  a.mutable_hooks()->add_poststart()->set_path("/bin/hook");
  auto* l = a.mutable_linux();
  auto* d = l->add_devices();
  d->set_path("/dev/nri-null");
  d->set_type("c");
  d->set_major(1);
  d->set_minor(3);
  auto* res = l->mutable_resources();
  res->mutable_cpu()->set_cpus("0");
  res->mutable_memory()->mutable_limit()->set_value(64 << 20);
  res->mutable_memory()->mutable_reservation()->set_value(32 << 20);
  res->mutable_pids()->set_limit(100);
  l->mutable_oom_score_adj()->set_value(500);
  l->set_cgroups_path("/nri/elsewhere");
  (*l->mutable_sysctl())["net.ipv4.ip_forward"] = "1";
  l->mutable_io_priority()->set_class_(nri_api::NRI_IOPRIO_CLASS_BE);
  l->mutable_io_priority()->set_priority(4);
  auto* sc = l->mutable_seccomp_policy();
  sc->set_default_action("SCMP_ACT_ALLOW");
  auto* call = sc->add_syscalls();
  call->add_names("mkdir");
  call->set_action("SCMP_ACT_ERRNO");
  oci::Spec s = base_spec();
  ASSERT_TRUE(apply_nri_adjustment(a, nullptr, s).ok());
  EXPECT_EQ(s.annotations.at("nri.example/x"), "1");
  EXPECT_EQ(s.process->env, (std::vector<std::string>{"PATH=/bin", "INJECTED=yes"}));
  ASSERT_EQ(s.mounts.size(), 1u);
  EXPECT_EQ(s.mounts[0].destination, "/nri");
  ASSERT_EQ(s.process->rlimits.size(), 1u);
  EXPECT_EQ(s.process->rlimits[0].hard, 4096u);
  EXPECT_EQ(s.hooks.at("poststart").at(0).path, "/bin/hook");
  ASSERT_EQ(s.linux->devices.size(), 1u);
  ASSERT_TRUE(s.linux->resources);
  // The device is allowed in its cgroup too.
  ASSERT_EQ(s.linux->resources->devices.size(), 1u);
  EXPECT_TRUE(s.linux->resources->devices[0].allow);
  EXPECT_EQ(s.linux->resources->devices[0].major, 1);
  EXPECT_EQ(s.linux->resources->cpu->cpus, "0");
  EXPECT_EQ(s.linux->resources->memory->limit, 64 << 20);
  EXPECT_EQ(s.linux->resources->memory->unknown["reservation"], 32 << 20);
  EXPECT_EQ(s.linux->resources->unknown["pids"]["limit"], 100);
  EXPECT_EQ(s.process->oom_score_adj, 500);
  EXPECT_EQ(s.linux->cgroups_path, "/nri/elsewhere");
  EXPECT_EQ(s.linux->sysctl.at("net.ipv4.ip_forward"), "1");
  EXPECT_EQ(s.process->unknown["ioPriority"]["class"], "IOPRIO_CLASS_BE");
  ASSERT_TRUE(s.linux->seccomp);
  EXPECT_EQ((*s.linux->seccomp)["syscalls"][0]["names"][0], "mkdir");
  EXPECT_EQ((*s.linux->seccomp)["defaultAction"], "SCMP_ACT_ALLOW");
}

TEST(NriSpec, WhatBerthDoesNotApplyIsRefusedNamingTheField) {
  auto refused = [](auto set) {
    nri_api::ContainerAdjustment a;
    set(*a.mutable_linux());
    oci::Spec s = base_spec();
    return apply_nri_adjustment(a, nullptr, s);
  };
  Status ns = refused([](auto& l) { l.add_namespaces()->set_type("network"); });
  EXPECT_EQ(ns.code(), Code::invalid_argument);
  EXPECT_EQ(ns.message(), "linux.namespaces: a container's namespaces are its pod's");
  EXPECT_NE(refused([](auto& l) { l.mutable_rdt(); }).message().find("linux.rdt:"), std::string::npos);
  EXPECT_NE(refused([](auto& l) { l.mutable_resources()->mutable_blockio_class()->set_value("slow"); })
                .message()
                .find("linux.resources.blockio_class:"),
            std::string::npos);
  EXPECT_NE(refused([](auto& l) { (*l.mutable_net_devices())["eth1"]; }).message().find("linux.net_devices:"),
            std::string::npos);
  EXPECT_NE(refused([](auto& l) { l.add_devices()->set_path("/dev/x"); }).message().find("type \"\""),
            std::string::npos);
  nri_api::ContainerAdjustment cdi;
  cdi.add_cdi_devices()->set_name("vendor.com/gpu=0");
  oci::Spec s = base_spec();
  EXPECT_EQ(apply_nri_adjustment(cdi, nullptr, s).message(), "CDI_devices: CDI is not configured in this berthd");
}

TEST(NriSpec, ResourcesGoBothWaysBetweenTheCriAndNri) {
  runtime::v1::LinuxContainerResources r;
  r.set_memory_limit_in_bytes(64 << 20);
  r.set_cpu_quota(50000);
  r.set_cpu_period(100000);
  r.set_cpuset_cpus("0-1");
  (*r.mutable_unified())["memory.high"] = "1000000";
  auto back = cri_resources(nri_resources(r));
  EXPECT_EQ(back.memory_limit_in_bytes(), 64 << 20);
  EXPECT_EQ(back.cpu_quota(), 50000);
  EXPECT_EQ(back.cpu_period(), 100000);
  EXPECT_EQ(back.cpuset_cpus(), "0-1");
  EXPECT_EQ(back.unified().at("memory.high"), "1000000");
  EXPECT_EQ(back.cpu_shares(), 0);  // unset stays unset
}

}  // namespace
}  // namespace berth
