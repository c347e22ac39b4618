// Pod sandboxes on a real berthd with runc: namespaces per option, DNS files, checkpoints and
// their quarantine, pause death, teardown leaving nothing, parallel runs, names and bad input.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <future>
#include <thread>

#include "berth/sandbox_checkpoint.h"
#include "berth/test/cri_client.h"
#include "berth/test/daemon_process.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_cgroup.h"
#include "berth/test/host_leftovers.h"

namespace berth::test {
namespace {

namespace v1 = runtime::v1;
namespace fs = std::filesystem;

ino_t ns_inode(int pid, const char* ns) {
  struct stat st {};
  std::string p = pid ? "/proc/" + std::to_string(pid) + "/ns/" + ns : std::string("/proc/self/ns/") + ns;
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

v1::PodSandboxConfig pod(const std::string& name) {
  auto c = test_pod(name);
  (*c.mutable_labels())["suite"] = "sandbox";
  return c;
}

// Daemons whose sandboxes are all removed when the test ends, also when it failed (DaemonTest).
class Sandboxes : public DaemonTest {
 protected:
  static grpc::Status run_pod(DaemonProcess& d, const v1::PodSandboxConfig& c, std::string* id,
                              const std::string& handler = "") {
    grpc::ClientContext ctx;
    v1::RunPodSandboxRequest req;
    *req.mutable_config() = c;
    req.set_runtime_handler(handler);
    v1::RunPodSandboxResponse resp;
    grpc::Status s = d.runtime()->RunPodSandbox(&ctx, req, &resp);
    if (id) *id = resp.pod_sandbox_id();
    return s;
  }
  static v1::PodSandboxStatusResponse status(DaemonProcess& d, const std::string& id, bool verbose = true) {
    grpc::ClientContext ctx;
    v1::PodSandboxStatusRequest req;
    req.set_pod_sandbox_id(id);
    req.set_verbose(verbose);
    v1::PodSandboxStatusResponse resp;
    grpc::Status s = d.runtime()->PodSandboxStatus(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }
  static grpc::Status pull_image(DaemonProcess& d, const std::string& image) {
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image(image);
    v1::PullImageResponse resp;
    return d.images()->PullImage(&ctx, req, &resp);
  }
  static grpc::Status remove_image(DaemonProcess& d, const std::string& image) {
    grpc::ClientContext ctx;
    v1::RemoveImageRequest req;
    req.mutable_image()->set_image(image);
    v1::RemoveImageResponse resp;
    return d.images()->RemoveImage(&ctx, req, &resp);
  }
  static v1::ImageStatusResponse image_status(DaemonProcess& d, const std::string& image) {
    grpc::ClientContext ctx;
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(image);
    v1::ImageStatusResponse resp;
    EXPECT_TRUE(d.images()->ImageStatus(&ctx, req, &resp).ok());
    return resp;
  }
  static int pause_pid(DaemonProcess& d, const std::string& id) {
    auto st = status(d, id);
    auto info = nlohmann::json::parse(st.info().at("info"));
    return info["pid"].get<int>();
  }
  static std::vector<v1::PodSandbox> list(DaemonProcess& d, const v1::PodSandboxFilter& f = {}) {
    grpc::ClientContext ctx;
    v1::ListPodSandboxRequest req;
    *req.mutable_filter() = f;
    v1::ListPodSandboxResponse resp;
    EXPECT_TRUE(d.runtime()->ListPodSandbox(&ctx, req, &resp).ok());
    return {resp.items().begin(), resp.items().end()};
  }
  static grpc::Status stop(DaemonProcess& d, const std::string& id) {
    grpc::ClientContext ctx;
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(id);
    v1::StopPodSandboxResponse resp;
    return d.runtime()->StopPodSandbox(&ctx, req, &resp);
  }
  static grpc::Status remove(DaemonProcess& d, const std::string& id) {
    grpc::ClientContext ctx;
    v1::RemovePodSandboxRequest req;
    req.set_pod_sandbox_id(id);
    v1::RemovePodSandboxResponse resp;
    return d.runtime()->RemovePodSandbox(&ctx, req, &resp);
  }
};

TEST_F(Sandboxes, PodNamespacesAreItsOwnWithLoopbackUp) {
  auto& d = daemon();
  std::string id;
  ASSERT_TRUE(run_pod(d, pod("ns-pod"), &id).ok());
  auto st = status(d, id);
  EXPECT_EQ(st.status().state(), v1::SANDBOX_READY);
  EXPECT_EQ(st.status().metadata().name(), "ns-pod");
  EXPECT_EQ(st.status().labels().at("app"), "ns-pod");
  EXPECT_EQ(st.status().runtime_handler(), "runc");
  EXPECT_GT(st.status().created_at(), 0);
  auto info = nlohmann::json::parse(st.info().at("info"));
  int pid = info["pid"];
  ASSERT_GT(pid, 0);
  for (const char* ns : {"net", "ipc", "pid", "uts", "mnt"}) EXPECT_NE(ns_inode(pid, ns), ns_inode(0, ns)) << ns;
  std::string netns = info["netns_path"];
  EXPECT_EQ(netns, d.state() + "/netns/" + id);
  EXPECT_NE(shell("nsenter --net=" + netns + " ip -o link show lo").find("UP"), std::string::npos);
  EXPECT_EQ(shell("nsenter --uts --target " + std::to_string(pid) + " hostname"), "ns-pod\n");
  EXPECT_EQ(info["runtimeSpec"]["process"]["args"][0], "/pause");
  // No capabilities, and the OOM score berth asked for (or berthd's own, without CAP_SYS_RESOURCE).
  std::string proc_status = shell("cat /proc/" + std::to_string(pid) + "/status");
  EXPECT_NE(proc_status.find("CapEff:\t0000000000000000"), std::string::npos) << proc_status;
  // berthd runs with this test's capabilities: with CAP_SYS_RESOURCE (bit 24) it may go below
  // its own score, without it not.
  int own = std::stoi(shell("cat /proc/self/oom_score_adj"));
  int adj = std::stoi(shell("cat /proc/" + std::to_string(pid) + "/oom_score_adj"));
  std::string self = read_file("/proc/self/status");
  uint64_t cap_eff = std::stoull(self.substr(self.find("CapEff:") + 7), nullptr, 16);
  if (cap_eff & (uint64_t{1} << 24)) {
    EXPECT_EQ(adj, -998);
  } else {
    EXPECT_EQ(adj, std::max(-998, own));
    if (adj != -998) {
      EXPECT_NE(d.log().find("lacks CAP_SYS_RESOURCE"), std::string::npos) << d.log();
    }
  }
  EXPECT_NE(proc_status.find("Seccomp:\t0"), std::string::npos);  // no profile asked for: unconfined
}

TEST_F(Sandboxes, HostNamespacesWhenAsked) {
  auto& d = daemon();
  auto c = pod("host-pod");
  auto* ns = c.mutable_linux()->mutable_security_context()->mutable_namespace_options();
  ns->set_network(v1::NODE);
  ns->set_pid(v1::NODE);
  ns->set_ipc(v1::NODE);
  std::string id;
  ASSERT_TRUE(run_pod(d, c, &id).ok());
  int pid = pause_pid(d, id);
  for (const char* n : {"net", "ipc", "pid", "uts"}) EXPECT_EQ(ns_inode(pid, n), ns_inode(0, n)) << n;
  EXPECT_FALSE(fs::exists(d.state() + "/netns/" + id));
  auto st = status(d, id);
  EXPECT_EQ(st.status().linux().namespaces().options().network(), v1::NODE);
  // Host-network pods use the host's resolv.conf, whatever dns_config says.
  EXPECT_EQ(shell("cat " + d.state() + "/sandboxes/" + id + "/resolv.conf"), shell("cat /etc/resolv.conf"));
}

TEST_F(Sandboxes, PidNamespacePerOption) {
  auto& d = daemon();
  auto c = pod("pid-container");
  c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::CONTAINER);
  std::string id;
  ASSERT_TRUE(run_pod(d, c, &id).ok());
  int pid = pause_pid(d, id);
  EXPECT_NE(ns_inode(pid, "pid"), ns_inode(0, "pid"));
  EXPECT_NE(ns_inode(pid, "ipc"), ns_inode(0, "ipc"));
}

TEST_F(Sandboxes, ResolvConfFromDnsConfigAndHostCopy) {
  auto& d = daemon();
  auto c = pod("dns-pod");
  c.mutable_dns_config()->add_servers("10.96.0.10");
  c.mutable_dns_config()->add_servers("10.96.0.11");
  c.mutable_dns_config()->add_searches("berth-test.svc.cluster.local");
  c.mutable_dns_config()->add_searches("svc.cluster.local");
  c.mutable_dns_config()->add_options("ndots:5");
  std::string id;
  ASSERT_TRUE(run_pod(d, c, &id).ok());
  std::string dir = d.state() + "/sandboxes/" + id;
  EXPECT_EQ(shell("cat " + dir + "/resolv.conf"),
            "nameserver 10.96.0.10\nnameserver 10.96.0.11\nsearch berth-test.svc.cluster.local "
            "svc.cluster.local\noptions ndots:5\n");
  EXPECT_EQ(shell("cat " + dir + "/hostname"), "dns-pod\n");
  EXPECT_NE(shell("cat " + dir + "/hosts").find("127.0.1.1\tdns-pod"), std::string::npos);
  std::string id2;
  ASSERT_TRUE(run_pod(d, pod("plain-pod"), &id2).ok());
  EXPECT_EQ(shell("cat " + d.state() + "/sandboxes/" + id2 + "/resolv.conf"), shell("cat /etc/resolv.conf"));
}

TEST_F(Sandboxes, SysctlsAndSeccompAreApplied) {
  auto& d = daemon();
  auto c = pod("sysctl-pod");
  (*c.mutable_linux()->mutable_sysctls())["net.ipv4.ip_unprivileged_port_start"] = "80";
  (*c.mutable_linux()->mutable_sysctls())["kernel.shm_rmid_forced"] = "1";
  c.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(
      v1::SecurityProfile::RuntimeDefault);
  std::string id;
  grpc::Status s = run_pod(d, c, &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  int pid = pause_pid(d, id);
  EXPECT_EQ(
      shell("nsenter --net --target " + std::to_string(pid) + " cat /proc/sys/net/ipv4/ip_unprivileged_port_start"),
      "80\n");
  EXPECT_EQ(shell("nsenter --ipc --target " + std::to_string(pid) + " cat /proc/sys/kernel/shm_rmid_forced"), "1\n");
  EXPECT_NE(shell("cat /proc/" + std::to_string(pid) + "/status").find("Seccomp:\t2"), std::string::npos);
}

// The embedded pause is started by berth-pause-launch, not the runtime (which knows nothing of
// it), with the spec's confinement: no capability in any set, no_new_privs, the seccomp filter,
// a read-only root, its own PID namespace (it is PID 1 there) and the sandbox's cgroup. A
// privileged pod's pause (every capability) still goes through the runtime.
TEST_F(Sandboxes, PauseStartsWithoutTheRuntimeAndConfined) {
  auto& d = daemon();
  auto c = pod("launched-pod");
  c.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(
      v1::SecurityProfile::RuntimeDefault);
  std::string id;
  ASSERT_OK(run_pod(d, c, &id));
  std::string runc_list = "runc --root " + d.state() + "/runtime/runc list -q";
  EXPECT_EQ(shell(runc_list).find(id), std::string::npos);
  std::string p = "/proc/" + std::to_string(pause_pid(d, id));
  std::string status = shell("cat " + p + "/status");
  for (const char* want :
       {"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
        "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2", "NSpid:\t"})
    EXPECT_NE(status.find(want), std::string::npos) << want << "\n" << status;
  EXPECT_NE(status.find("\t1\n", status.find("NSpid:")), std::string::npos) << status;  // PID 1 in its namespace
  EXPECT_NE(shell("cat " + p + "/cgroup").find(id), std::string::npos);
  // Its root: the pause rootfs, read-only.
  std::string root_line = shell("awk '$5 == \"/\"' " + p + "/mountinfo");
  EXPECT_NE(root_line.find(" ro"), std::string::npos) << root_line;
  EXPECT_EQ(shell("readlink " + p + "/exe"), "/pause\n");
  ASSERT_OK(stop(d, id));
  ASSERT_OK(remove(d, id));

  // A non-root pause loses its bounding set too (dropped before its ids change).
  auto nonroot = pod("nonroot-launched-pod");
  nonroot.mutable_linux()->mutable_security_context()->mutable_run_as_user()->set_value(1234);
  ASSERT_OK(run_pod(d, nonroot, &id));
  std::string nonroot_status = shell("cat /proc/" + std::to_string(pause_pid(d, id)) + "/status");
  EXPECT_NE(nonroot_status.find("Uid:\t1234\t1234\t1234\t1234"), std::string::npos) << nonroot_status;
  EXPECT_NE(nonroot_status.find("CapBnd:\t0000000000000000"), std::string::npos) << nonroot_status;
  ASSERT_OK(stop(d, id));
  ASSERT_OK(remove(d, id));

  auto priv = pod("privileged-pod");
  priv.mutable_linux()->mutable_security_context()->set_privileged(true);
  ASSERT_OK(run_pod(d, priv, &id));
  EXPECT_NE(shell(runc_list).find(id), std::string::npos);
  ASSERT_OK(stop(d, id));
  ASSERT_OK(remove(d, id));
}

TEST_F(Sandboxes, SecurityContextUserResourcesAndLocalhostSeccomp) {
  auto& d = daemon();
  TempDir dir;
  write_file(dir / "profile.json",
             R"({"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["reboot"],"action":"SCMP_ACT_ERRNO"}]})");
  auto c = pod("secure-pod");
  auto* sc = c.mutable_linux()->mutable_security_context();
  sc->mutable_run_as_user()->set_value(1234);
  sc->mutable_run_as_group()->set_value(4321);
  sc->add_supplemental_groups(77);
  sc->mutable_seccomp()->set_profile_type(v1::SecurityProfile::Localhost);
  sc->mutable_seccomp()->set_localhost_ref(dir / "profile.json");
  c.mutable_linux()->mutable_resources()->set_memory_limit_in_bytes(64 << 20);
  c.mutable_linux()->mutable_overhead()->set_memory_limit_in_bytes(16 << 20);
  c.mutable_linux()->mutable_resources()->set_cpu_shares(512);
  std::string id;
  grpc::Status s = run_pod(d, c, &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  int pid = pause_pid(d, id);
  std::string st = shell("cat /proc/" + std::to_string(pid) + "/status");
  EXPECT_NE(st.find("Uid:	1234	1234"), std::string::npos) << st;
  EXPECT_NE(st.find("Gid:	4321	4321"), std::string::npos) << st;
  EXPECT_NE(st.find("Groups:	77"), std::string::npos) << st;
  EXPECT_NE(st.find("Seccomp:	2"), std::string::npos) << st;
  EXPECT_NE(st.find("NoNewPrivs:	1"), std::string::npos) << st;
  const std::string cg = test_cgroup_parent() + "/" + id;
  EXPECT_EQ(read_file(host_cgroup_file(cg, "memory", "memory.limit_in_bytes", "memory.max")),
            std::to_string(80 << 20) + "\n");
  // 512 shares are weight 20 on v2 (runc's and crun's conversion).
  EXPECT_EQ(read_file(host_cgroup_file(cg, "cpu", "cpu.shares", "cpu.weight")), host_cgroup_v2() ? "20\n" : "512\n");

  auto priv = pod("privileged-pod");
  priv.mutable_linux()->mutable_security_context()->set_privileged(true);
  grpc::Status ps = run_pod(d, priv, &id);
  ASSERT_TRUE(ps.ok()) << ps.error_message();
  std::string pst = shell("cat /proc/" + std::to_string(pause_pid(d, id)) + "/status");
  EXPECT_EQ(pst.find("CapEff:\t0000000000000000"), std::string::npos) << pst;  // all capabilities
  EXPECT_NE(pst.find("Seccomp:\t0"), std::string::npos) << pst;
}

TEST_F(Sandboxes, CheckpointIsValidAndACorruptOneIsQuarantined) {
  TempDir& shared = scratch();
  auto net = std::make_shared<TestNetwork>();
  std::string root = shared / "root", state = shared / "state";
  std::string id, cgroups_path;
  {
    DaemonProcess& d = daemon_at({.network = net}, shared / "a.sock", root, state);
    ASSERT_TRUE(run_pod(d, pod("cp-pod"), &id).ok());
    cgroups_path = nlohmann::json::parse(status(d, id).info().at("info")).value("cgroups_path", "");
    EXPECT_FALSE(cgroups_path.empty());
    auto cp = read_checkpoint(root + "/sandboxes/" + id + ".json");
    ASSERT_TRUE(cp.ok()) << cp.status().message();
    EXPECT_EQ(cp->name, "cp-pod");
    EXPECT_EQ(cp->netns_path, state + "/netns/" + id);
    EXPECT_EQ(cp->cgroup_parent, test_cgroup_parent());
    EXPECT_EQ(cp->runtime_handler, "runc");
    // A second checkpoint that is corrupt: one changed byte breaks its checksum.
    std::string text = read_file(root + "/sandboxes/" + id + ".json");
    size_t at = text.find("cp-pod");
    text[at] = 'X';
    write_file(root + "/sandboxes/" + std::string(64, 'f') + ".json", text);
    d.stop();
  }
  DaemonProcess& d = daemon_at({.network = net}, shared / "b.sock", root, state);
  EXPECT_NE(d.log().find("quarantined"), std::string::npos) << d.log();
  EXPECT_FALSE(fs::exists(root + "/sandboxes/" + std::string(64, 'f') + ".json"));
  EXPECT_FALSE(fs::is_empty(root + "/sandboxes-quarantine"));
  // The good sandbox was recovered, still running.
  auto pods = list(d);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].id(), id);
  EXPECT_EQ(pods[0].state(), v1::SANDBOX_READY);
  // Its cgroup is known again (stats and verbose status read it).
  EXPECT_EQ(nlohmann::json::parse(status(d, id).info().at("info")).value("cgroups_path", ""), cgroups_path);
  ASSERT_TRUE(remove(d, id).ok());
  EXPECT_FALSE(fs::exists(root + "/sandboxes/" + id + ".json"));
}

// Between two live pods, the one whose pause died is listed NOTREADY and the others READY (the
// list polls every pause's pidfd at once).
TEST_F(Sandboxes, KilledPauseMakesTheSandboxNotReady) {
  auto& d = daemon();
  std::string before, id, after;
  ASSERT_TRUE(run_pod(d, pod("live-pod-1"), &before).ok());
  ASSERT_TRUE(run_pod(d, pod("kill-pod"), &id).ok());
  ASSERT_TRUE(run_pod(d, pod("live-pod-2"), &after).ok());
  int pid = pause_pid(d, id);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 100 && status(d, id).status().state() == v1::SANDBOX_READY; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(status(d, id).status().state(), v1::SANDBOX_NOTREADY);
  v1::PodSandboxFilter f;
  f.mutable_state()->set_state(v1::SANDBOX_NOTREADY);
  auto not_ready = list(d, f);
  ASSERT_EQ(not_ready.size(), 1u);
  EXPECT_EQ(not_ready[0].id(), id);
  auto all = list(d);
  ASSERT_EQ(all.size(), 3u);
  for (const auto& p : all)
    EXPECT_EQ(p.state(), p.id() == id ? v1::SANDBOX_NOTREADY : v1::SANDBOX_READY) << p.metadata().name();
  f.mutable_state()->set_state(v1::SANDBOX_READY);
  EXPECT_EQ(list(d, f).size(), 2u);
  for (const auto& other : {before, after}) ASSERT_TRUE(remove(d, other).ok());
}

TEST_F(Sandboxes, StopThenRemoveLeaveNothing) {
  auto& d = daemon();
  std::string id;
  ASSERT_TRUE(run_pod(d, pod("gone-pod"), &id).ok());
  int pid = pause_pid(d, id);
  std::string cg = host_cgroup_dir(test_cgroup_parent() + "/" + id, "memory");
  EXPECT_TRUE(fs::exists(cg));
  ASSERT_TRUE(stop(d, id).ok());
  EXPECT_EQ(status(d, id).status().state(), v1::SANDBOX_NOTREADY);
  ASSERT_TRUE(stop(d, id).ok());  // idempotent
  ASSERT_TRUE(remove(d, id).ok());
  ASSERT_TRUE(remove(d, id).ok());
  EXPECT_TRUE(stop(d, std::string(64, 'e')).ok());  // unknown ids succeed
  EXPECT_TRUE(remove(d, std::string(64, 'e')).ok());
  EXPECT_EQ(read_file("/proc/self/mountinfo").find(id), std::string::npos);
  EXPECT_FALSE(fs::exists(d.state() + "/netns/" + id));
  EXPECT_FALSE(fs::exists(d.state() + "/sandboxes/" + id));
  EXPECT_FALSE(fs::exists(cg));
  // Gone, or a zombie nobody reaped yet (the pause is re-parented to pid 1): not running.
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  char state = paren == std::string::npos || paren + 2 >= stat.size() ? 'X' : stat[paren + 2];
  EXPECT_TRUE(state == 'Z' || state == 'X') << "pause " << pid << " still there: " << stat;
  grpc::ClientContext ctx;
  v1::PodSandboxStatusRequest req;
  req.set_pod_sandbox_id(id);
  v1::PodSandboxStatusResponse resp;
  EXPECT_EQ(d.runtime()->PodSandboxStatus(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A directory even root cannot add to (FS_IMMUTABLE_FL) while the object lives.
class ImmutableDir {
 public:
  explicit ImmutableDir(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0 || ::ioctl(fd_, FS_IOC_GETFLAGS, &flags_) != 0) return;
    int frozen = flags_ | FS_IMMUTABLE_FL;
    set_ = ::ioctl(fd_, FS_IOC_SETFLAGS, &frozen) == 0;
  }
  ~ImmutableDir() {
    if (set_) ::ioctl(fd_, FS_IOC_SETFLAGS, &flags_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool set() const { return set_; }

 private:
  int fd_;
  int flags_ = 0;
  bool set_ = false;
};

// A checkpoint that cannot be written fails the run naming it, and leaves nothing behind, the
// name neither (the same pod runs once the disk takes the write again).
TEST_F(Sandboxes, ACheckpointThatCannotBeWrittenFailsTheRunAndLeavesNothing) {
  auto& d = daemon();
  ASSERT_NE(d.network(), nullptr);
  std::string id;
  {
    ImmutableDir frozen(d.root() + "/sandboxes");
    if (!frozen.set()) GTEST_SKIP() << "the file system of " << d.root() << " has no immutable flag";
    grpc::Status s = run_pod(d, pod("unrecorded"), &id);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.error_message().find("checkpoint of "), std::string::npos) << s.error_message();
    EXPECT_NE(s.error_message().find("run pod sandbox"), std::string::npos) << s.error_message();
  }
  auto left = host_leftovers({d.root(), d.state(), test_cgroup_parent(), d.network(), false});
  for (const auto& l : left) ADD_FAILURE() << "left on the host: " << l;
  EXPECT_TRUE(list(d).empty());
  ASSERT_TRUE(run_pod(d, pod("unrecorded"), &id).ok());
  EXPECT_EQ(list(d).size(), 1u);
}

TEST_F(Sandboxes, TwentyInParallelAndFilters) {
  auto& d = daemon();
  std::vector<std::future<std::pair<grpc::Status, std::string>>> runs;
  for (int i = 0; i < 20; ++i)
    runs.push_back(std::async(std::launch::async, [&, i] {
      std::string id;
      auto c = pod("par-" + std::to_string(i));
      (*c.mutable_labels())["parity"] = i % 2 ? "odd" : "even";
      grpc::Status s = run_pod(d, c, &id);
      return std::pair{s, id};
    }));
  std::set<std::string> ids;
  for (auto& r : runs) {
    auto [s, id] = r.get();
    EXPECT_TRUE(s.ok()) << s.error_message();
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 20u);
  EXPECT_EQ(list(d).size(), 20u);
  v1::PodSandboxFilter odd;
  (*odd.mutable_label_selector())["parity"] = "odd";
  EXPECT_EQ(list(d, odd).size(), 10u);
  v1::PodSandboxFilter by_prefix;
  by_prefix.set_id(ids.begin()->substr(0, 12));
  ASSERT_EQ(list(d, by_prefix).size(), 1u);
  EXPECT_EQ(status(d, ids.begin()->substr(0, 12)).status().id(), *ids.begin());  // prefixes accepted
}

TEST_F(Sandboxes, NameIsReservedWhileTheSandboxExists) {
  auto& d = daemon();
  std::string id, dup;
  ASSERT_TRUE(run_pod(d, pod("named"), &id).ok());
  grpc::Status s = run_pod(d, pod("named"), &dup);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_NE(s.error_message().find("is reserved for sandbox " + id), std::string::npos) << s.error_message();
  auto next = pod("named");
  next.mutable_metadata()->set_attempt(1);
  EXPECT_TRUE(run_pod(d, next, &dup).ok());
  ASSERT_TRUE(remove(d, id).ok());
  EXPECT_TRUE(run_pod(d, pod("named"), &dup).ok());
}

TEST_F(Sandboxes, SandboxImageFromARegistryIsPulledPinnedAndUsed) {
  RegistryProcess reg;
  auto digests = nlohmann::json::parse(push_test_images(
      reg.url(),
      {"--only", "busybox", "--pause-binary", fs::path(berthd_path()).parent_path().string() + "/berth-pause"}));
  std::string image = reg.host() + "/test/pause:v1";
  auto& d = daemon({.config_toml = "sandbox_image = \"" + image + "\"\n"});
  std::string id;
  grpc::Status s = run_pod(d, pod("image-pause"), &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(status(d, id).status().state(), v1::SANDBOX_READY);
  // The pause runs from the image's rootfs (mounted for this sandbox), not from berth's embedded one.
  std::string rootfs = d.state() + "/sandboxes/" + id + "/rootfs";
  auto info = nlohmann::json::parse(status(d, id).info().at("info"));
  EXPECT_EQ(info["runtimeSpec"]["root"]["path"], rootfs);
  EXPECT_NE(read_file("/proc/self/mountinfo").find(rootfs), std::string::npos);
  EXPECT_GT(pause_pid(d, id), 0);
  grpc::ClientContext ctx;
  v1::ImageStatusRequest req;
  req.mutable_image()->set_image(image);
  v1::ImageStatusResponse img;
  ASSERT_TRUE(d.images()->ImageStatus(&ctx, req, &img).ok());
  EXPECT_TRUE(img.image().pinned());
  EXPECT_EQ(img.image().id(), digests["pause"]["config"]);
  // Removing the image while the pause runs from it keeps its layers until the sandbox goes,
  // also across a restart of berthd.
  {
    grpc::ClientContext rctx;
    v1::RemoveImageRequest rreq;
    rreq.mutable_image()->set_image(image);
    v1::RemoveImageResponse rresp;
    ASSERT_TRUE(d.images()->RemoveImage(&rctx, rreq, &rresp).ok());
  }
  std::string snapshots = d.root() + "/images/snapshots";
  std::string pause_layer = snapshots + "/" + digests["pause"]["layers"][0].get<std::string>().substr(7);
  EXPECT_TRUE(fs::exists(pause_layer + "/pause"));
  int pid = pause_pid(d, id);
  d.stop();
  ASSERT_TRUE(d.start()) << d.log();
  EXPECT_EQ(status(d, id).status().state(), v1::SANDBOX_READY);
  EXPECT_FALSE(image_status(d, image).has_image());  // still removed
  // Pulling and removing another image collects garbage: the pause's layer stays.
  std::string other = reg.host() + "/test/busybox:latest";
  ASSERT_TRUE(pull_image(d, other).ok());
  ASSERT_TRUE(remove_image(d, other).ok());
  EXPECT_TRUE(fs::exists(pause_layer + "/pause"));
  EXPECT_EQ(status(d, id).status().state(), v1::SANDBOX_READY);
  EXPECT_EQ(pause_pid(d, id), pid);
  EXPECT_EQ(::kill(pid, 0), 0);
  ASSERT_TRUE(remove(d, id).ok());
  EXPECT_EQ(read_file("/proc/self/mountinfo").find(id), std::string::npos);
  EXPECT_TRUE(fs::is_empty(snapshots));
  EXPECT_TRUE(fs::is_empty(d.root() + "/images/blobs/sha256"));
}

TEST_F(Sandboxes, SandboxImageAClientPulledFirstIsPinned) {
  RegistryProcess reg;
  push_test_images(
      reg.url(), {"--only", "none", "--pause-binary", fs::path(berthd_path()).parent_path().string() + "/berth-pause"});
  std::string image = reg.host() + "/test/pause:v1";
  auto& d = daemon({.config_toml = "sandbox_image = \"" + image + "\"\n"});
  ASSERT_TRUE(pull_image(d, image).ok());
  ASSERT_TRUE(image_status(d, image).has_image());
  EXPECT_FALSE(image_status(d, image).image().pinned());
  std::string id;
  grpc::Status s = run_pod(d, pod("client-pulled-pause"), &id);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(image_status(d, image).image().pinned());
  // Persisted: still pinned after a restart.
  d.stop();
  ASSERT_TRUE(d.start()) << d.log();
  EXPECT_TRUE(image_status(d, image).image().pinned());
  ASSERT_TRUE(remove(d, id).ok());
}

TEST_F(Sandboxes, BadInputIsRefusedAndLeavesNothing) {
  auto& d = daemon();
  struct Case {
    std::string what;
    std::function<void(v1::PodSandboxConfig&)> change;
    std::string handler;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"no name", [](auto& c) { c.mutable_metadata()->set_name(""); }, "", "config.metadata.name"},
      {"no uid", [](auto& c) { c.mutable_metadata()->set_uid(""); }, "", "config.metadata.uid"},
      {"handler", [](auto&) {}, "gvisor", "unknown handler 'gvisor' (known: runc)"},
      {"sysctl", [](auto& c) { (*c.mutable_linux()->mutable_sysctls())["kernel.hostname"] = "x"; }, "",
       "'kernel.hostname' is not a namespaced sysctl"},
      {"host net sysctl",
       [](auto& c) {
         c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(v1::NODE);
         (*c.mutable_linux()->mutable_sysctls())["net.ipv4.ip_forward"] = "1";
       },
       "", "host's network namespace"},
      {"target",
       [](auto& c) { c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_pid(v1::TARGET); },
       "", "namespace_options.pid"},
      {"cgroup parent", [](auto& c) { c.mutable_linux()->set_cgroup_parent("relative/path"); }, "",
       "linux.cgroup_parent"},
      {"seccomp file",
       [](auto& c) {
         auto* p = c.mutable_linux()->mutable_security_context()->mutable_seccomp();
         p->set_profile_type(v1::SecurityProfile::Localhost);
         p->set_localhost_ref("/nonexistent/profile.json");
       },
       "", "/nonexistent/profile.json"},
  };
  for (const auto& k : cases) {
    auto c = pod("bad-" + std::to_string(&k - cases.data()));
    k.change(c);
    std::string id;
    grpc::Status s = run_pod(d, c, &id, k.handler);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << k.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(k.expect), std::string::npos) << k.what << ": " << s.error_message();
  }
  // A failure late on the way (runc itself refuses the spec, after the netns, files and checkpoint
  // were made) is rolled back completely too.
  TempDir dir;
  write_file(dir / "bad.json", R"({"defaultAction":"SCMP_ACT_NO_SUCH_ACTION"})");
  auto late = pod("late-failure");
  late.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(v1::SecurityProfile::Localhost);
  late.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_localhost_ref(dir / "bad.json");
  const std::string parent = "/berth-test-late-" + std::to_string(::getpid());
  late.mutable_linux()->set_cgroup_parent(parent);
  std::string id;
  grpc::Status s = run_pod(d, late, &id);
  EXPECT_FALSE(s.ok());
  // No cgroup of the sandbox is left under its parent in any controller, nor the parent itself,
  // which the runtime made for it.
  for (const char* controller : {"memory", "cpu", "pids", "cpuset"}) {
    fs::path p = host_cgroup_dir(parent, controller);
    EXPECT_FALSE(fs::exists(p)) << "left behind: " << p;
    std::error_code ec;
    fs::remove(p, ec);
  }
  EXPECT_NE(s.error_message().find("runc"), std::string::npos) << s.error_message();
  EXPECT_EQ(read_file("/proc/self/mountinfo").find(d.state() + "/netns"), std::string::npos);
  EXPECT_TRUE(list(d).empty());
  EXPECT_TRUE(fs::is_empty(d.state() + "/netns"));
  EXPECT_TRUE(fs::is_empty(d.state() + "/sandboxes"));
  EXPECT_TRUE(fs::is_empty(d.root() + "/sandboxes"));
}

}  // namespace
}  // namespace berth::test
