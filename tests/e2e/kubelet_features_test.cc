// What a current kubelet (1.34+) asks of the runtime, on a real berthd with runc: the handlers and
// features Status advertises, recursive read-only mounts, ALL capabilities on a host that
// withholds some from berthd, an ExecSync timeout that leaves no process behind, CDI devices, in-place
// pod resize and image volumes. Each effect
// is checked from inside a running container or on the host.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "berth/test/cri_client.h"
#include "berth/test/host_cgroup.h"
#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

class KubeletFeatures : public PodFixture {
 protected:
  // Every test image: the image volume test mounts the four-layer test/layered:v1.
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    push_test_images(registry_->url());
  }
  static std::string layered() { return registry_->host() + "/test/layered:v1"; }
};

// A tmpfs mounted for the test, unmounted however the test ends.
struct TestMount {
  std::string path;
  explicit TestMount(const std::string& at) : path(at) {
    fs::create_directories(path);
    EXPECT_EQ(::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=64k"), 0) << std::strerror(errno);
  }
  ~TestMount() { ::umount2(path.c_str(), MNT_DETACH); }
};

std::string cap_line(const std::string& status, const std::string& key) {
  size_t at = status.find(key + ":");
  if (at == std::string::npos) return "";
  size_t end = status.find('\n', at);
  std::string v = status.substr(at + key.size() + 1, end - at - key.size() - 1);
  v.erase(0, v.find_first_not_of(" \t"));
  return v;
}

TEST_F(KubeletFeatures, StatusAdvertisesEveryHandlerAndWhatItCanDo) {
  // runc (rro of its own), crun where installed (Debian 12's has no `features`: berthd's read-only
  // copy), and a handler whose binary is not there, which can do nothing.
  std::string toml = "[runtimes.runc]\npath = \"runc\"\n[runtimes.gone]\npath = \"/nonexistent/berth-test-runtime\"\n";
  const bool crun = ::access("/usr/bin/crun", X_OK) == 0;
  if (crun) toml += "[runtimes.crun]\npath = \"/usr/bin/crun\"\n";
  auto& cri = ready("pod", {.config_toml = toml});
  v1::StatusResponse r;
  ASSERT_OK(cri.status(&r));
  // The default handler ("") and every configured one.
  ASSERT_EQ(r.runtime_handlers_size(), crun ? 4 : 3);
  EXPECT_EQ(r.runtime_handlers(0).name(), "");
  std::set<std::string> names;
  for (const auto& h : r.runtime_handlers()) {
    SCOPED_TRACE(h.name());
    names.insert(h.name());
    if (h.name() == "gone") {
      EXPECT_FALSE(h.features().recursive_read_only_mounts());
      EXPECT_FALSE(h.features().user_namespaces());
      continue;
    }
    // This kernel has mount_setattr (5.12+): the runtime's rro, or berthd's own read-only copy.
    EXPECT_TRUE(h.features().recursive_read_only_mounts());
    // And id-mapped overlay layers (5.19+): pods may have user namespaces of their own.
    EXPECT_TRUE(h.features().user_namespaces());
  }
  EXPECT_TRUE(names.count("runc"));
  EXPECT_TRUE(names.count("gone"));
  EXPECT_EQ(names.count("crun"), crun ? 1u : 0u);
  EXPECT_TRUE(r.features().supplemental_groups_policy());
  // As pods may have user namespaces here, they may keep the node's network with them.
  EXPECT_TRUE(r.features().user_namespaces_host_network());
  // A handler that can do nothing does not make Status fail: the runtime berthd runs is ready.
  bool runtime_ready = false;
  for (const auto& c : r.status().conditions())
    if (c.type() == "RuntimeReady") runtime_ready = c.status();
  EXPECT_TRUE(runtime_ready);
}

// Both ways berth honours it: the runtime's own `rro` (Debian's runc lists it in `runc features`)
// and, for a runtime without it (here a wrapper that hides it), a read-only copy berthd prepares.
TEST_F(KubeletFeatures, RecursiveReadOnlyMountMakesEverySubmountReadOnly) {
  TempDir wrapper;
  write_file(
      wrapper / "runc-norro",
      "#!/bin/sh\nif [ \"$1\" = features ]; then runc features | grep -v '\"rro\",'; else exec runc \"$@\"; fi\n",
      0755);
  auto& cri = ready("pod", {.config_toml = "[runtimes.runc]\npath = \"runc\"\n[runtimes.norro]\npath = \"" +
                                           (wrapper / "runc-norro") + "\"\n"});
  TempDir host;
  fs::permissions(host.path(), fs::perms(0755));
  write_file(host / "top.txt", "top\n");
  TestMount sub(host / "sub");
  write_file(host / "sub/inner.txt", "inner\n");

  auto norro_pod = test_pod("norro");
  norro_pod.set_log_directory(logs_->path());
  std::string norro_pod_id;
  ASSERT_OK(cri.run_pod(norro_pod, &norro_pod_id, "norro"));
  for (bool host_prepared : {false, true}) {
    SCOPED_TRACE(host_prepared ? "berthd's copy (norro)" : "runc's rro");
    auto c = shell_container(host_prepared ? "rro-copy" : "rro", "sleep 1000");
    for (bool recursive : {true, false}) {
      auto* m = c.add_mounts();
      m->set_container_path(recursive ? "/rro" : "/ro");
      m->set_host_path(host.path());
      m->set_readonly(true);
      m->set_recursive_read_only(recursive);
    }
    std::string id;
    ASSERT_OK(
        cri.create_container(host_prepared ? norro_pod_id : pod_, c, &id, host_prepared ? norro_pod : pod_config_));
    ASSERT_OK(cri.start_container(id));
    EXPECT_EQ(exec_out(id, {"cat", "/rro/top.txt", "/rro/sub/inner.txt"}), "top\ninner\n");
    auto writes = [&](const std::string& path) {
      return exec_out(id, {"/bin/sh", "-c", "touch " + path + " 2>/dev/null && echo yes || echo no"});
    };
    EXPECT_EQ(writes("/rro/new"), "no\n");
    EXPECT_EQ(writes("/rro/sub/new"), "no\n");  // the submount is read-only too
    // The plain read-only mount beside it leaves its submount writable: what recursive adds.
    EXPECT_EQ(writes("/ro/new"), "no\n");
    EXPECT_EQ(writes("/ro/sub/new"), "yes\n");
    fs::remove(host / "sub/new");
    EXPECT_FALSE(fs::exists(host / "new"));

    // The host-side copy exists only when berthd made it, and goes with the container.
    const std::string prepared = d_->state() + "/containers/" + id + "/mounts";
    EXPECT_EQ(read_file("/proc/self/mountinfo").find(prepared) != std::string::npos, host_prepared);
    ASSERT_OK(cri.stop_container(id, 0));
    ASSERT_OK(cri.remove_container(id));
    EXPECT_EQ(read_file("/proc/self/mountinfo").find(prepared), std::string::npos);
    EXPECT_FALSE(fs::exists(prepared));
  }
  ASSERT_OK(cri.stop_pod(norro_pod_id));
  ASSERT_OK(cri.remove_pod(norro_pod_id));
}

TEST_F(KubeletFeatures, RecursiveReadOnlyThatCannotBeHonouredIsRefusedNotDowngraded) {
  auto& cri = ready();
  TempDir host;
  struct Case {
    bool readonly;
    v1::MountPropagation propagation;
    const char* why;
  } cases[] = {
      {false, v1::PROPAGATION_PRIVATE, "config.mounts[0].recursive_read_only: needs readonly"},
      {true, v1::PROPAGATION_HOST_TO_CONTAINER, "config.mounts[0].recursive_read_only: needs private propagation"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.why);
    auto c = shell_container("refused", "sleep 1000");
    auto* m = c.add_mounts();
    m->set_container_path("/data");
    m->set_host_path(host.path());
    m->set_readonly(k.readonly);
    m->set_propagation(k.propagation);
    m->set_recursive_read_only(true);
    std::string id;
    grpc::Status s = cri.create_container(pod_, c, &id, pod_config_);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find(k.why), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(cri.list_containers().empty());
  EXPECT_TRUE(fs::is_empty(d_->state() + "/containers"));
}

// This machine withholds some capabilities (CAP_SYS_RESOURCE among them) from root: ALL means
// what berthd can grant, the container starts, and its CapEff is berthd's bounding set.
TEST_F(KubeletFeatures, AllCapabilitiesAreWhatBerthdCanGrant) {
  auto& cri = ready();
  const std::string bounding = cap_line(read_file("/proc/" + std::to_string(d_->pid()) + "/status"), "CapBnd");
  ASSERT_FALSE(bounding.empty());
  auto c = shell_container("all-caps", "sleep 1000");
  c.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities("ALL");
  std::string id = run(c);
  EXPECT_EQ(cap_line(exec_out(id, {"cat", "/proc/self/status"}), "CapEff"), bounding);

  // The same for a privileged container, in a privileged pod.
  auto pod = test_pod("privileged");
  pod.mutable_linux()->mutable_security_context()->set_privileged(true);
  pod.set_log_directory(logs_->path());
  std::string pod_id;
  ASSERT_OK(cri.run_pod(pod, &pod_id));
  auto p = shell_container("privileged", "sleep 1000");
  p.mutable_linux()->mutable_security_context()->set_privileged(true);
  std::string pid;
  ASSERT_OK(cri.create_container(pod_id, p, &pid, pod));
  ASSERT_OK(cri.start_container(pid));
  EXPECT_EQ(cap_line(exec_out(pid, {"cat", "/proc/self/status"}), "CapEff"), bounding);
}

// kubelet's exec probes: at the timeout the command inside the container is killed and reaped
// before DeadlineExceeded comes back, not left running (nor as a zombie) behind the runtime.
TEST_F(KubeletFeatures, ExecSyncTimeoutLeavesNoProcess) {
  auto& cri = ready();
  std::string id = run(shell_container("probe", "sleep 1000"));
  const std::vector<std::string> command{"sleep", "4321"};
  ASSERT_EQ(host_processes_running(command), std::vector<std::string>{});
  v1::ExecSyncResponse r;
  grpc::Status s = cri.exec_sync(id, {"sleep", "4321"}, &r, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("the command was killed"), std::string::npos) << s.error_message();
  EXPECT_EQ(host_processes_running(command), std::vector<std::string>{});
}

// CDI devices as a device plugin or DRA driver hands them over (the CDI_devices field, or the
// cdi.k8s.io/* annotations): spec files (JSON and YAML) expose real host devices under vendor
// names, with env, a mount and a group; every edit is seen from inside the running container, and
// what cannot be resolved fails the create naming it.
TEST_F(KubeletFeatures, CdiDevicesAreAppliedAsTheirSpecsSay) {
  TempDir specs, data;
  fs::permissions(data.path(), fs::perms(0755));
  write_file(data / "readme", "vendor data\n");
  write_file(specs / "vendor.json", R"({"cdiVersion":"0.6.0","kind":"vendor.example/test",
    "containerEdits":{"env":["VENDOR_SPEC=1"]},
    "devices":[
      {"name":"null","containerEdits":{"deviceNodes":[{"path":"/dev/vendor-null","hostPath":"/dev/null"}],"env":["VENDOR_DEV=null"]}},
      {"name":"loop","containerEdits":{"deviceNodes":[{"path":"/dev/vendor-loop","hostPath":"/dev/loop-control"}],
                                       "mounts":[{"hostPath":")" +
                                        data.path() +
                                        R"(","containerPath":"/vendor-data","options":["ro","rbind"]}]}}]})");
  write_file(specs / "other.yaml",
             "cdiVersion: 0.7.0\nkind: other.example/gpu\ndevices:\n- name: zero\n  containerEdits:\n"
             "    deviceNodes:\n    - path: /dev/vendor-zero\n      hostPath: /dev/zero\n"
             "    additionalGIDs: [4321]\n");
  write_file(specs / "broken.json",
             R"({"cdiVersion":"9.9.9","kind":"broken.example/x","devices":[{"name":"a","containerEdits":{}}]})");
  auto& cri = ready("pod", {.config_toml = "cdi_spec_dirs = [\"" + specs.path() + "\"]\n"});

  auto c = shell_container("cdi", "sleep 1000");
  for (const char* name : {"vendor.example/test=null", "vendor.example/test=loop", "other.example/gpu=zero"})
    c.add_cdi_devices()->set_name(name);
  std::string id = run(c);
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c", "echo $VENDOR_SPEC $VENDOR_DEV"}), "1 null\n");
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c", "test -c /dev/vendor-null && echo x > /dev/vendor-null && echo wrote"}),
            "wrote\n");
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c", "head -c 4 /dev/vendor-zero | od -An -tx1"}), " 00 00 00 00\n");
  // Not among the runtime's default devices: it opens only through the spec's cgroup rule.
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c", "exec 3<>/dev/vendor-loop && echo opened"}), "opened\n");
  EXPECT_EQ(exec_out(id, {"cat", "/vendor-data/readme"}), "vendor data\n");
  EXPECT_NE(exec_out(id, {"id", "-G"}).find("4321"), std::string::npos);
  // A container without the device has neither the node nor the rule.
  std::string plain = run(shell_container("plain", "sleep 1000"));
  EXPECT_EQ(exec_out(plain, {"/bin/sh", "-c", "test -e /dev/vendor-loop || echo absent"}), "absent\n");

  struct Case {
    const char* device;
    grpc::StatusCode code;
    std::string why;
  } cases[] = {
      {"vendor.example/test=nope", grpc::StatusCode::NOT_FOUND, "CDI device 'vendor.example/test=nope': unknown"},
      {"broken.example/x=a", grpc::StatusCode::FAILED_PRECONDITION, specs / "broken.json"},
      {"not-qualified", grpc::StatusCode::INVALID_ARGUMENT, "not-qualified"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.device);
    auto bad = shell_container("bad", "sleep 1000");
    bad.add_cdi_devices()->set_name(k.device);
    std::string bad_id;
    grpc::Status s = cri.create_container(pod_, bad, &bad_id, pod_config_);
    EXPECT_EQ(s.error_code(), k.code) << s.error_message();
    EXPECT_NE(s.error_message().find("config.CDI_devices"), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find(k.why), std::string::npos) << s.error_message();
  }
  EXPECT_EQ(cri.list_containers().size(), 2u);

  // A spec file changed on disk is seen by the next create, without a restart.
  write_file(
      specs / "broken.json",
      R"({"cdiVersion":"0.8.0","kind":"broken.example/x","devices":[{"name":"a","containerEdits":{"env":["FIXED=yes"]}}]})");
  auto fixed = shell_container("fixed", "sleep 1000");
  fixed.add_cdi_devices()->set_name("broken.example/x=a");
  std::string fixed_id = run(fixed);
  EXPECT_EQ(exec_out(fixed_id, {"/bin/sh", "-c", "echo $FIXED"}), "yes\n");

  // Device plugins that predate the field ask through cdi.k8s.io/* annotations: honoured the same
  // way; a name there that is not qualified is refused naming the annotation, never dropped.
  auto annotated = shell_container("annotated", "sleep 1000");
  (*annotated.mutable_annotations())["cdi.k8s.io/vendor.test_null"] = "vendor.example/test=null";
  std::string annotated_id = run(annotated);
  EXPECT_EQ(exec_out(annotated_id, {"/bin/sh", "-c", "echo $VENDOR_DEV; test -c /dev/vendor-null && echo node"}),
            "null\nnode\n");
  auto misnamed = shell_container("misnamed", "sleep 1000");
  (*misnamed.mutable_annotations())["cdi.k8s.io/vendor.test_0"] = "null";
  std::string misnamed_id;
  grpc::Status refused = cri.create_container(pod_, misnamed, &misnamed_id, pod_config_);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << refused.error_message();
  EXPECT_NE(refused.error_message().find("annotation cdi.k8s.io/vendor.test_0"), std::string::npos)
      << refused.error_message();
}

// In-place pod resize: the pod's own cgroup gets the new pod-level limits (resources plus
// overhead), up and down; a memory limit below what the pod uses is refused; the limits are
// recorded and still shown after a berthd restart.
TEST_F(KubeletFeatures, UpdatePodSandboxResourcesResizesThePodCgroup) {
  cgroup_parent_ = "/berth-test-resize-" + std::to_string(::getpid());
  auto& cri = ready();
  std::string id = run(shell_container("busy", "sleep 1000"));
  const bool v2 = fs::exists("/sys/fs/cgroup/cgroup.controllers");
  auto value = [&](const char* controller, const char* v1_file, const char* v2_file) {
    std::string path = v2 ? "/sys/fs/cgroup" + cgroup_parent_ + "/" + v2_file
                          : std::string("/sys/fs/cgroup/") + controller + cgroup_parent_ + "/" + v1_file;
    std::string text = read_file(path);
    return text.substr(0, text.find('\n'));
  };
  auto update = [&](int64_t memory, int64_t quota) {
    v1::UpdatePodSandboxResourcesRequest req;
    req.set_pod_sandbox_id(pod_);
    req.mutable_overhead()->set_memory_limit_in_bytes(16 << 20);
    req.mutable_overhead()->set_cpu_quota(10000);
    req.mutable_resources()->set_memory_limit_in_bytes(memory);
    req.mutable_resources()->set_cpu_quota(quota);
    req.mutable_resources()->set_cpu_period(100000);
    req.mutable_resources()->set_cpu_shares(512);
    v1::UpdatePodSandboxResourcesResponse resp;
    grpc::ClientContext ctx;
    return cri.runtime().UpdatePodSandboxResources(&ctx, req, &resp);
  };
  ASSERT_OK(update(256 << 20, 50000));
  EXPECT_EQ(value("memory", "memory.limit_in_bytes", "memory.max"), std::to_string(272 << 20));
  EXPECT_EQ(value("cpu", "cpu.cfs_quota_us", "cpu.max"), v2 ? "60000 100000" : "60000");
  if (!v2) {
    EXPECT_EQ(value("cpu", "cpu.shares", ""), "512");
  }
  ASSERT_OK(update(128 << 20, 20000));  // down
  EXPECT_EQ(value("memory", "memory.limit_in_bytes", "memory.max"), std::to_string(144 << 20));
  EXPECT_EQ(value("cpu", "cpu.cfs_quota_us", "cpu.max"), v2 ? "30000 100000" : "30000");
  // The container still runs inside the resized pod.
  EXPECT_EQ(exec_out(id, {"echo", "alive"}), "alive\n");

  grpc::Status below = update(4096 - (16 << 20), 20000);  // with the overhead: 4 KiB in all
  EXPECT_EQ(below.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << below.error_message();
  v1::UpdatePodSandboxResourcesRequest tiny;
  tiny.set_pod_sandbox_id(pod_);
  tiny.mutable_resources()->set_memory_limit_in_bytes(4096);
  v1::UpdatePodSandboxResourcesResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = cri.runtime().UpdatePodSandboxResources(&ctx, tiny, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("below the current memory use"), std::string::npos) << s.error_message();
  EXPECT_EQ(value("memory", "memory.limit_in_bytes", "memory.max"), std::to_string(144 << 20));  // unchanged

  auto recorded = [&](CriClient& client) {
    v1::PodSandboxStatusResponse st;
    EXPECT_TRUE(client.pod_status(pod_, &st, true).ok());
    return nlohmann::json::parse(st.info().at("info"))["resources"];
  };
  EXPECT_EQ(recorded(cri)["memory_limit_in_bytes"], 144 << 20);
  ASSERT_EQ(d_->stop(), 0);
  ASSERT_TRUE(d_->start()) << d_->log();
  CriClient again(*d_);
  auto after = recorded(again);
  EXPECT_EQ(after["memory_limit_in_bytes"], 144 << 20);
  EXPECT_EQ(after["cpu_quota"], 30000);

  grpc::ClientContext unknown_ctx;
  v1::UpdatePodSandboxResourcesRequest unknown;
  unknown.set_pod_sandbox_id("nope");
  EXPECT_EQ(again.runtime().UpdatePodSandboxResources(&unknown_ctx, unknown, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// kubelet makes the pod cgroups itself and sets them before UpdatePodSandboxResources, which only
// informs the runtime: a burstable pod whose cgroup kubelet left without a memory limit keeps
// none. The resources are recorded all the same.
TEST_F(KubeletFeatures, UpdatePodSandboxResourcesLeavesACgroupBerthDidNotMake) {
  cgroup_parent_ = "/berth-test-kubelet-pod-" + std::to_string(::getpid());
  for (const auto& root : host_cgroup_roots()) {
    std::error_code ec;
    fs::create_directories(root + cgroup_parent_, ec);
    ASSERT_FALSE(ec) << root + cgroup_parent_ << ": " << ec.message();
  }
  struct Cleanup {
    std::string parent;
    ~Cleanup() {
      for (const auto& root : host_cgroup_roots()) ::rmdir((root + parent).c_str());
    }
  } cleanup{cgroup_parent_};
  const std::string memory = host_cgroup_file(cgroup_parent_, "memory", "memory.limit_in_bytes", "memory.max");
  const std::string unlimited = read_file(memory);
  auto& cri = ready();
  run(shell_container("busy", "sleep 1000"));
  v1::UpdatePodSandboxResourcesRequest req;
  req.set_pod_sandbox_id(pod_);
  req.mutable_resources()->set_memory_limit_in_bytes(256 << 20);
  req.mutable_resources()->set_cpu_quota(50000);
  req.mutable_resources()->set_cpu_period(100000);
  v1::UpdatePodSandboxResourcesResponse resp;
  grpc::ClientContext ctx;
  ASSERT_OK(cri.runtime().UpdatePodSandboxResources(&ctx, req, &resp));
  EXPECT_EQ(read_file(memory), unlimited);
  v1::PodSandboxStatusResponse st;
  ASSERT_OK(cri.pod_status(pod_, &st, true));
  EXPECT_EQ(nlohmann::json::parse(st.info().at("info"))["resources"]["memory_limit_in_bytes"], 256 << 20);
  // The pod goes before its parent (the cleanup's rmdir needs it empty).
  ASSERT_OK(cri.stop_pod(pod_));
  ASSERT_OK(cri.remove_pod(pod_));
}

// A log_directory spelt with a trailing slash, or with doubled ones, holds the containers' logs
// where it names (berth-monitor refused a trailing slash: the log path it was given, normalised,
// was not below the directory it was given).
TEST_F(KubeletFeatures, ALogDirectorySpeltWithExtraSlashesHoldsTheLogs) {
  auto& cri = ready();
  int n = 0;
  for (const std::string& spelt : {logs_->path() + "/trailing/", logs_->path() + "//doubled//inside"}) {
    SCOPED_TRACE(spelt);
    auto config = test_pod("slashes-" + std::to_string(n++));
    config.set_log_directory(spelt);
    std::string pod;
    ASSERT_OK(cri.run_pod(config, &pod));
    auto c = shell_container("talk", "echo hello-log; sleep 1000");
    c.set_log_path("talk.log");
    std::string id;
    ASSERT_OK(cri.create_container(pod, c, &id, config));
    ASSERT_OK(cri.start_container(id));
    std::string dir = fs::path(spelt).lexically_normal().string();
    if (dir.back() == '/') dir.pop_back();
    EXPECT_TRUE(wait_for_file_text(dir + "/talk.log", "stdout F hello-log")) << d_->log();
    ASSERT_OK(cri.stop_pod(pod));
    ASSERT_OK(cri.remove_pod(pod));
  }
}

// Image volumes: an image's layers mounted read-only, once per pod and image, shared by the pod's
// containers that name it, with a sub path that must exist and stay inside; the image is held
// while mounted (RemoveImage keeps its layers), and the volume goes with its last container, also
// after a berthd restart.
TEST_F(KubeletFeatures, ImageVolumesAreSharedReadOnlyLayers) {
  auto& cri = ready();
  ASSERT_OK(cri.pull_image(layered()));
  auto with_volumes = [&](const std::string& name) {
    auto c = shell_container(name, "sleep 1000");
    auto add = [&](const std::string& path, const std::string& image, const std::string& sub) {
      auto* m = c.add_mounts();
      m->set_container_path(path);
      m->mutable_image()->set_image(image);
      m->set_image_sub_path(sub);
    };
    add("/vol", layered(), "");
    add("/sub", layered(), "data");
    add("/bb", image(), "");  // one layer: a bind instead of an overlay
    return c;
  };
  std::string a = run(with_volumes("a"));
  // The merged layers: layer 4's file, layer 3's whiteout of data/a.
  EXPECT_EQ(exec_out(a, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");
  EXPECT_EQ(exec_out(a, {"ls", "/sub"}), "b\nb-link\nnull\nsym\n");
  EXPECT_EQ(exec_out(a, {"/bin/sh", "-c", "test -x /bb/bin/busybox && echo yes"}), "yes\n");
  for (const char* path : {"/vol/new", "/sub/new", "/bb/new"})
    EXPECT_EQ(exec_out(a, {"/bin/sh", "-c", std::string("touch ") + path + " 2>/dev/null && echo yes || echo no"}),
              "no\n")
        << path;
  auto st = status(a);
  ASSERT_EQ(st.mounts_size(), 3);
  EXPECT_EQ(st.mounts(1).image().image(), layered());
  EXPECT_EQ(st.mounts(1).image_sub_path(), "data");

  // A second container of the pod shares the mounted volumes.
  std::string b = run(with_volumes("b"));
  EXPECT_EQ(exec_out(b, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");
  const std::string volumes = d_->state() + "/image-volumes/" + pod_;
  auto mounted = [&] {
    std::string info = read_file("/proc/self/mountinfo");
    int n = 0;
    for (size_t at = info.find(volumes); at != std::string::npos; at = info.find(volumes, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(mounted(), 2);  // layered and busybox, once each

  // Held while mounted: removing the image keeps its layers for the containers.
  ASSERT_OK(cri.remove_image(layered()));
  EXPECT_EQ(exec_out(b, {"cat", "/vol/zstd-file"}), "from a zstd layer\n");

  ASSERT_OK(cri.stop_container(a, 0));
  ASSERT_OK(cri.remove_container(a));
  EXPECT_EQ(mounted(), 2);  // b still uses them
  // A restart finds the volumes' users again from their specs.
  ASSERT_EQ(d_->stop(), 0);
  ASSERT_TRUE(d_->start()) << d_->log();
  CriClient again(*d_);
  EXPECT_EQ(mounted(), 2);
  v1::ExecSyncResponse r;
  ASSERT_OK(again.exec_sync(b, {"cat", "/vol/zstd-file"}, &r, 10));
  EXPECT_EQ(r.stdout(), "from a zstd layer\n");
  ASSERT_OK(again.stop_container(b, 0));
  ASSERT_OK(again.remove_container(b));
  EXPECT_EQ(mounted(), 0);
  EXPECT_FALSE(fs::exists(volumes));
}

TEST_F(KubeletFeatures, ImageVolumeSubPathMustExistAndStayInside) {
  auto& cri = ready();
  ASSERT_OK(cri.pull_image(layered()));
  struct Case {
    std::string image, sub;
    grpc::StatusCode code;
    const char* why;
  } cases[] = {
      {layered(), "nope", grpc::StatusCode::INVALID_ARGUMENT,
       "config.mounts[0].image_sub_path: 'nope' does not exist in the image"},
      {layered(), "../..", grpc::StatusCode::INVALID_ARGUMENT,
       "config.mounts[0].image_sub_path: '../..' leaves the image"},
      {layered(), "data/sym", grpc::StatusCode::INVALID_ARGUMENT,
       "config.mounts[0].image_sub_path: 'data/sym' leaves the image"},
      {registry_->host() + "/test/never-pulled:v1", "", grpc::StatusCode::NOT_FOUND, "config.mounts[0].image: image"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.sub);
    auto c = shell_container("bad", "sleep 1000");
    auto* m = c.add_mounts();
    m->set_container_path("/vol");
    m->mutable_image()->set_image(k.image);
    m->set_image_sub_path(k.sub);
    std::string id;
    grpc::Status s = cri.create_container(pod_, c, &id, pod_config_);
    EXPECT_EQ(s.error_code(), k.code) << s.error_message();
    EXPECT_NE(s.error_message().find(k.why), std::string::npos) << s.error_message();
  }
  // Nothing was left mounted or held by the refused creates.
  EXPECT_EQ(read_file("/proc/self/mountinfo").find(d_->state() + "/image-volumes"), std::string::npos);
  ASSERT_OK(cri.remove_image(layered()));
  v1::ImageStatusResponse img;
  grpc::ClientContext ctx;
  v1::ImageStatusRequest req;
  req.mutable_image()->set_image(layered());
  auto stub = d_->images();
  ASSERT_TRUE(stub->ImageStatus(&ctx, req, &img).ok());
  EXPECT_FALSE(img.has_image());
}

}  // namespace
}  // namespace berth::test
