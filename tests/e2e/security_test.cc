// Security against a real berthd with runc: a table of hostile requests (each refused with
// INVALID_ARGUMENT naming the field, leaving the host as it was), ambiguous id prefixes refused by
// every rpc taking an id, CRI log files that a planted symlink cannot redirect, state that other
// host users cannot reach, the default confinement seen from inside a container, cgroup parents
// made for a pod removed with it, and bearer realms that may not leak credentials.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "berth/test/host_leftovers.h"
#include "berth/test/host_cgroup.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

// Every line of the census, for comparing the host before and after a refused request.
std::set<std::string> census(DaemonProcess& d) {
  auto lines = host_leftovers({d.root(), d.state(), test_cgroup_parent(), d.network(), false});
  return {lines.begin(), lines.end()};
}

// The census once the containers just started have become their commands: StartContainer returns
// when runc has released the init, which execs the command a moment later, so a census taken at
// once may still see `runc init` where the next one sees the command.
std::set<std::string> settled_census(DaemonProcess& d) {
  // A container still being made (runc init), or whose shell has not yet exec'd its last command
  // (busybox sh -c does: the census would see "sh -c sleep 1000" now and "sleep 1000" later).
  auto starting = [](const std::set<std::string>& lines) {
    return std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find(" runc init") != std::string::npos || l.find(" sh -c ") != std::string::npos;
    });
  };
  auto lines = census(d);
  for (int i = 0; i < 100 && starting(lines); ++i) {
    ::usleep(100 * 1000);
    lines = census(d);
  }
  return lines;
}

std::string nul(const std::string& before, const std::string& after) { return before + std::string(1, '\0') + after; }

struct Hostile {
  std::string what;
  std::string field;                                    // the error must name it
  std::function<void(v1::PodSandboxConfig&)> pod;       // RunPodSandbox with this change, or
  std::function<void(v1::ContainerConfig&)> container;  // CreateContainer with this change, or
  std::vector<std::string> exec;                        // ExecSync and Exec of this command
};

std::vector<Hostile> hostile_requests() {
  using P = v1::PodSandboxConfig;
  using C = v1::ContainerConfig;
  auto dns = [](P& c) { return c.mutable_dns_config(); };
  auto sc = [](C& c) { return c.mutable_linux()->mutable_security_context(); };
  return {
      // RunPodSandbox: CNI_ARGS, file lines, paths.
      {"pod name with ';' (CNI_ARGS)", "config.metadata.name",
       [](P& c) { c.mutable_metadata()->set_name("a;K8S_POD_NAME=b"); }},
      {"pod namespace with '='", "config.metadata.namespace",
       [](P& c) { c.mutable_metadata()->set_namespace_("ns=x"); }},
      {"pod uid with ';'", "config.metadata.uid", [](P& c) { c.mutable_metadata()->set_uid("u;IgnoreUnknown=0"); }},
      {"pod name with a newline", "config.metadata.name", [](P& c) { c.mutable_metadata()->set_name("a\nb"); }},
      {"pod name with NUL", "config.metadata.name", [](P& c) { c.mutable_metadata()->set_name(nul("a", "b")); }},
      {"hostname with '/'", "config.hostname", [](P& c) { c.set_hostname("a/b"); }},
      {"hostname with a newline (a hosts line)", "config.hostname", [](P& c) { c.set_hostname("a\n10.0.0.1 evil"); }},
      {"hostname with an empty label", "config.hostname", [](P& c) { c.set_hostname("a..b"); }},
      {"hostname of 100 characters", "config.hostname", [](P& c) { c.set_hostname(std::string(100, 'a')); }},
      {"hostname starting with '-'", "config.hostname", [](P& c) { c.set_hostname("-a"); }},
      {"hostname with NUL", "config.hostname", [](P& c) { c.set_hostname(nul("a", "b")); }},
      {"relative log directory", "config.log_directory", [](P& c) { c.set_log_directory("var/log/pods/x"); }},
      {"log directory with '..'", "config.log_directory", [](P& c) { c.set_log_directory("/var/log/pods/../../etc"); }},
      {"DNS server with a second line", "config.dns_config.servers[0]",
       [=](P& c) { dns(c)->add_servers("10.0.0.10\nnameserver 6.6.6.6"); }},
      {"DNS server that is no address", "config.dns_config.servers[1]",
       [=](P& c) {
         dns(c)->add_servers("10.0.0.10");
         dns(c)->add_servers("dns.example");
       }},
      {"DNS search with a second line", "config.dns_config.searches[0]",
       [=](P& c) { dns(c)->add_searches("svc.cluster.local\nnameserver 6.6.6.6"); }},
      {"DNS search with a space (a second domain)", "config.dns_config.searches[0]",
       [=](P& c) { dns(c)->add_searches("a.com evil.com"); }},
      {"DNS option with a second line", "config.dns_config.options[0]",
       [=](P& c) { dns(c)->add_options("ndots:5\nnameserver 6.6.6.6"); }},
      {"sysctl value with a newline", "config.linux.sysctls",
       [](P& c) { (*c.mutable_linux()->mutable_sysctls())["net.ipv4.ip_unprivileged_port_start"] = "0\n1"; }},
      {"sysctl name leaving /proc/sys", "config.linux.sysctls",
       [](P& c) { (*c.mutable_linux()->mutable_sysctls())["net/../../../etc/x"] = "1"; }},
      {"label value with NUL", "config.labels", [](P& c) { (*c.mutable_labels())["app"] = nul("a", "b"); }},
      {"annotation key with NUL", "config.annotations", [](P& c) { (*c.mutable_annotations())[nul("k", "x")] = "v"; }},
      {"cgroup parent with a newline", "config.linux.cgroup_parent",
       [](P& c) { c.mutable_linux()->set_cgroup_parent("/berth-test-pods\n/x"); }},
      {"cgroup parent with '..'", "cgroup_parent",
       [](P& c) { c.mutable_linux()->set_cgroup_parent("/berth-test-pods/../../x"); }},
      {"port mapping host IP that is no address", "config.port_mappings[0].host_ip",
       [](P& c) {
         auto* p = c.add_port_mappings();
         p->set_container_port(80);
         p->set_host_port(8080);
         p->set_host_ip("1.2.3.4 -j ACCEPT");
       }},
      {"port mapping container port 70000", "config.port_mappings[0].container_port",
       [](P& c) { c.add_port_mappings()->set_container_port(70000); }},
      {"seccomp profile path with a newline", "config.linux.security_context.seccomp.localhost_ref",
       [](P& c) {
         auto* p = c.mutable_linux()->mutable_security_context()->mutable_seccomp();
         p->set_profile_type(v1::SecurityProfile::Localhost);
         p->set_localhost_ref("/var/lib/kubelet/seccomp/a\n.json");
       }},
      // CreateContainer: exec arguments, env, paths, the log path.
      {"container name with NUL", "config.metadata.name", nullptr,
       [](C& c) { c.mutable_metadata()->set_name(nul("c", "x")); }},
      {"container name with a newline", "config.metadata.name", nullptr,
       [](C& c) { c.mutable_metadata()->set_name("c\nx"); }},
      {"image with NUL", "config.image.image", nullptr,
       [](C& c) { c.mutable_image()->set_image(nul("busybox", "x")); }},
      {"command with NUL", "config.command[0]", nullptr, [](C& c) { c.set_command(0, nul("/bin/sh", "x")); }},
      {"argument with NUL", "config.args[0]", nullptr, [](C& c) { c.add_args(nul("a", "b")); }},
      {"env value with NUL", "config.envs[0].value", nullptr,
       [](C& c) {
         auto* e = c.add_envs();
         e->set_key("A");
         e->set_value(nul("1", "LD_PRELOAD=/x"));
       }},
      {"env key with NUL", "config.envs[0].key", nullptr,
       [](C& c) {
         auto* e = c.add_envs();
         e->set_key(nul("A", "B"));
         e->set_value("1");
       }},
      {"relative working dir", "config.working_dir", nullptr, [](C& c) { c.set_working_dir("srv"); }},
      {"working dir with NUL", "config.working_dir", nullptr, [](C& c) { c.set_working_dir(nul("/srv", "x")); }},
      {"relative mount container path", "config.mounts[0].container_path", nullptr,
       [](C& c) {
         auto* m = c.add_mounts();
         m->set_container_path("data");
         m->set_host_path("/tmp");
       }},
      {"mount container path with '..'", "config.mounts[0].container_path", nullptr,
       [](C& c) {
         auto* m = c.add_mounts();
         m->set_container_path("/data/../../proc");
         m->set_host_path("/tmp");
       }},
      {"mount host path with NUL", "config.mounts[0].host_path", nullptr,
       [](C& c) {
         auto* m = c.add_mounts();
         m->set_container_path("/data");
         m->set_host_path(nul("/tmp", "x"));
       }},
      {"device container path with '..'", "config.devices[0].container_path", nullptr,
       [](C& c) {
         auto* d = c.add_devices();
         d->set_container_path("/dev/../etc/null");
         d->set_host_path("/dev/null");
         d->set_permissions("rw");
       }},
      {"absolute log path", "config.log_path", nullptr, [](C& c) { c.set_log_path("/etc/cron.d/x"); }},
      {"log path with '..'", "config.log_path", nullptr, [](C& c) { c.set_log_path("../escape.log"); }},
      {"log path leaving the directory through a subdir", "config.log_path", nullptr,
       [](C& c) { c.set_log_path("a/../../x.log"); }},
      {"log path with a newline", "config.log_path", nullptr, [](C& c) { c.set_log_path("c\n.log"); }},
      {"label with NUL", "config.labels", nullptr, [](C& c) { (*c.mutable_labels())["k"] = nul("v", "x"); }},
      {"annotation with NUL", "config.annotations", nullptr,
       [](C& c) { (*c.mutable_annotations())["k"] = nul("v", "x"); }},
      {"masked path that is relative", "config.linux.security_context.masked_paths[0]", nullptr,
       [=](C& c) { sc(c)->add_masked_paths("proc/kcore"); }},
      {"AppArmor profile name with a newline", "config.linux.security_context", nullptr,
       [=](C& c) { sc(c)->set_apparmor_profile("localhost/x\ny"); }},
      // ExecSync and Exec.
      {"exec argument with NUL", "cmd[1]", nullptr, nullptr, {"/bin/echo", nul("a", "b")}},
  };
}

class Security : public PodFixture {
 protected:
  // Issues the hostile request; on an unexpected success, removes what it made and says so.
  bool refused(const Hostile& h, const std::string& running) {
    grpc::Status s;
    std::string made;
    if (h.pod) {
      auto c = test_pod("hostile");
      c.set_log_directory(logs_->path() + "/hostile");
      h.pod(c);
      s = cri_->run_pod(c, &made);
      if (s.ok()) (void)cri_->remove_pod(made);
    } else if (h.container) {
      auto c = shell_container("hostile", "sleep 1000");
      h.container(c);
      s = cri_->create_container(pod_, c, &made, pod_config_);
      if (s.ok()) (void)cri_->remove_container(made);
    } else {
      v1::ExecSyncResponse r;
      s = cri_->exec_sync(running, h.exec, &r, 10);
      grpc::Status streamed = exec_url(running, h.exec);
      EXPECT_EQ(streamed.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << h.what << " (Exec): " << streamed.error_message();
    }
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << h.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(h.field), std::string::npos) << h.what << ": " << s.error_message();
    return s.error_code() == grpc::StatusCode::INVALID_ARGUMENT;
  }
  grpc::Status exec_url(const std::string& id, const std::vector<std::string>& cmd) {
    grpc::ClientContext ctx;
    v1::ExecRequest req;
    req.set_container_id(id);
    for (const auto& a : cmd) req.add_cmd(a);
    req.set_stdout(true);
    v1::ExecResponse resp;
    return cri_->runtime().Exec(&ctx, req, &resp);
  }
};

TEST_F(Security, HostileRequestsAreRefusedNamingTheFieldAndLeaveNothing) {
  auto& cri = ready();
  std::string running = run(shell_container("running", "sleep 1000"));
  auto pods_before = cri.list_pods().size();
  auto containers_before = cri.list_containers().size();
  auto host_before = settled_census(*d_);
  auto cases = hostile_requests();
  int accepted = 0;
  for (const auto& h : cases) {
    if (!refused(h, running)) ++accepted;
    EXPECT_EQ(cri.list_pods().size(), pods_before) << h.what;
    EXPECT_EQ(cri.list_containers().size(), containers_before) << h.what;
    auto host_after = census(*d_);
    std::vector<std::string> added;
    std::set_difference(host_after.begin(), host_after.end(), host_before.begin(), host_before.end(),
                        std::back_inserter(added));
    EXPECT_TRUE(added.empty()) << h.what << " left: " << added.front() << " (" << added.size() << " in all)";
  }
  std::printf("hostile requests: %zu cases, %d accepted\n", cases.size(), accepted);
  RecordProperty("hostile_cases", static_cast<int>(cases.size()));
  RecordProperty("hostile_accepted", accepted);
  // The pod and its container still work.
  EXPECT_EQ(exec_out(running, {"echo", "ok"}), "ok\n");
}

// Two pods and two containers whose ids share a first character: that character as an id matches
// both, and every rpc taking an id refuses it naming the field (Stop and Remove included: an OK
// that did nothing would leave kubelet believing it done); nothing was stopped or removed.
TEST_F(Security, AnAmbiguousIdPrefixIsRefusedByEveryRpc) {
  auto& cri = ready();
  std::map<char, std::vector<std::string>> pods_by_first, containers_by_first;
  pods_by_first[pod_[0]].push_back(pod_);
  std::string pod_prefix, container_prefix;
  for (int i = 0; pod_prefix.empty() && i < 40; ++i) {
    auto c = test_pod("twin-" + std::to_string(i));
    c.set_log_directory(logs_->path());
    std::string id;
    ASSERT_OK(cri.run_pod(c, &id));
    if (pods_by_first[id[0]].push_back(id), pods_by_first[id[0]].size() == 2) pod_prefix = std::string(1, id[0]);
  }
  for (int i = 0; container_prefix.empty() && i < 40; ++i) {
    std::string id;
    ASSERT_OK(cri.create_container(pod_, shell_container("twin-" + std::to_string(i), "sleep 1000"), &id, pod_config_));
    if (containers_by_first[id[0]].push_back(id), containers_by_first[id[0]].size() == 2)
      container_prefix = std::string(1, id[0]);
  }
  ASSERT_FALSE(pod_prefix.empty());
  ASSERT_FALSE(container_prefix.empty());
  auto& rt = cri.runtime();
  auto expect_refused = [&](const std::string& rpc, grpc::Status s, const std::string& field) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << rpc << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(field), std::string::npos) << rpc << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("several"), std::string::npos) << rpc << ": " << s.error_message();
  };
  const std::string& p = pod_prefix;
  const std::string& c = container_prefix;
  expect_refused("StopPodSandbox", cri.stop_pod(p), "pod_sandbox_id");
  expect_refused("RemovePodSandbox", cri.remove_pod(p), "pod_sandbox_id");
  v1::PodSandboxStatusResponse ps;
  expect_refused("PodSandboxStatus", cri.pod_status(p, &ps), "pod_sandbox_id");
  {
    grpc::ClientContext ctx;
    v1::PodSandboxStatsRequest req;
    req.set_pod_sandbox_id(p);
    v1::PodSandboxStatsResponse resp;
    expect_refused("PodSandboxStats", rt.PodSandboxStats(&ctx, req, &resp), "pod_sandbox_id");
  }
  {
    grpc::ClientContext ctx;
    v1::PortForwardRequest req;
    req.set_pod_sandbox_id(p);
    req.add_port(80);
    v1::PortForwardResponse resp;
    expect_refused("PortForward", rt.PortForward(&ctx, req, &resp), "pod_sandbox_id");
  }
  std::string made;
  expect_refused("CreateContainer", cri.create_container(p, shell_container("x", "true"), &made, pod_config_),
                 "pod_sandbox_id");
  expect_refused("StartContainer", cri.start_container(c), "container_id");
  expect_refused("StopContainer", cri.stop_container(c, 0), "container_id");
  expect_refused("RemoveContainer", cri.remove_container(c), "container_id");
  v1::ContainerStatusResponse cs;
  expect_refused("ContainerStatus", cri.container_status(c, &cs), "container_id");
  v1::ExecSyncResponse es;
  expect_refused("ExecSync", cri.exec_sync(c, {"true"}, &es, 5), "container_id");
  expect_refused("Exec", exec_url(c, {"true"}), "container_id");
  {
    grpc::ClientContext ctx;
    v1::AttachRequest req;
    req.set_container_id(c);
    req.set_stdout(true);
    v1::AttachResponse resp;
    expect_refused("Attach", rt.Attach(&ctx, req, &resp), "container_id");
  }
  {
    grpc::ClientContext ctx;
    v1::ContainerStatsRequest req;
    req.set_container_id(c);
    v1::ContainerStatsResponse resp;
    expect_refused("ContainerStats", rt.ContainerStats(&ctx, req, &resp), "container_id");
  }
  expect_refused("UpdateContainerResources", cri.update_resources(c, {}), "container_id");
  expect_refused("ReopenContainerLog", cri.reopen_log(c), "container_id");
  // Nothing was stopped, removed or started.
  for (const auto& pod : cri.list_pods()) EXPECT_EQ(pod.state(), v1::SANDBOX_READY) << pod.id();
  for (const auto& ct : cri.list_containers()) EXPECT_EQ(ct.state(), v1::CONTAINER_CREATED) << ct.id();
}

// A symlink planted in the pod's log directory where the log file will be (or on the way to it)
// is not followed: CreateContainer refuses, and the host file it points at is untouched.
TEST_F(Security, ASymlinkPlantedInTheLogDirectoryIsNotFollowed) {
  auto& cri = ready();
  TempDir victim_dir;
  write_file(victim_dir / "victim", "host file\n");
  fs::create_symlink(victim_dir / "victim", logs_->path() + "/planted.log");
  fs::create_symlink(victim_dir.path(), logs_->path() + "/linked-dir");
  for (const char* log : {"planted.log", "linked-dir/victim"}) {
    auto c = shell_container("writer", "echo overwritten");
    c.set_log_path(log);
    std::string id;
    grpc::Status s = cri.create_container(pod_, c, &id, pod_config_);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << log << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("config.log_path"), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(cri.list_containers().empty());
  EXPECT_EQ(read_file(victim_dir / "victim"), "host file\n");
  // A symlink swapped in after the container started is not followed when the log is reopened.
  auto c = shell_container("rotated", "while :; do echo line; sleep 0.1; done");
  c.set_log_path("sub/rotated.log");
  std::string id = run(c);
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/sub/rotated.log", "line"));
  fs::rename(logs_->path() + "/sub/rotated.log", logs_->path() + "/sub/rotated.log.1");
  fs::create_symlink(victim_dir / "victim", logs_->path() + "/sub/rotated.log");
  EXPECT_FALSE(cri.reopen_log(id).ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(read_file(victim_dir / "victim"), "host file\n");
}

// As an unprivileged host user, nothing inside a running container's rootfs, its pod's shm or
// the image snapshots can be listed, run or opened.
TEST_F(Security, OtherHostUsersCannotReachContainerContent) {
  (void)ready();
  std::string id = run(shell_container("content", "echo secret > /dev/shm/x; sleep 1000"));
  std::string rootfs = d_->state() + "/containers/" + id + "/rootfs";
  std::string shm = d_->state() + "/sandboxes/" + pod_ + "/shm";
  ASSERT_TRUE(fs::exists(rootfs + "/bin/busybox"));
  ASSERT_TRUE(wait_for_file_text(shm + "/x", "secret"));
  std::string snapshot;
  for (const auto& e : fs::directory_iterator(d_->root() + "/images/snapshots")) snapshot = e.path();
  ASSERT_FALSE(snapshot.empty());
  // The daemon's own dirs as an operator might leave them (the temp dir is 0700, which would make
  // the test pass whatever berth does): only berth's modes below them may keep others out.
  for (const std::string& dir : {d_->dir(), d_->root(), d_->state()}) fs::permissions(dir, fs::perms(0755));
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all ";
  ASSERT_EQ(shell(as_nobody + "id -u").substr(0, 5), "65534");
  for (const std::string& cmd : {"ls " + rootfs, rootfs + "/bin/busybox true", "cat " + rootfs + "/etc/passwd",
                                 "ls " + shm, "cat " + shm + "/x", "ls " + snapshot, "cat " + snapshot + "/etc/passwd",
                                 "ls " + d_->root() + "/containers/" + id, "ls " + d_->state() + "/netns"}) {
    // Through a shell: setpriv's own exec of its argument is not a fair test of the user's rights.
    std::string out = shell(as_nobody + "/bin/sh -c '" + cmd + "' 2>&1; echo \"exit=$?\"");
    EXPECT_NE(out.find("Permission denied"), std::string::npos) << cmd << ": " << out;
    EXPECT_EQ(out.find("exit=0"), std::string::npos) << cmd << ": " << out;
  }
  // The container itself, running as an unprivileged user, still works.
  auto user = shell_container("unprivileged", "sleep 1000");
  user.mutable_linux()->mutable_security_context()->mutable_run_as_user()->set_value(1000);
  std::string u = run(user);
  EXPECT_EQ(exec_out(u, {"sh", "-c", "id -u; ls / >/dev/null && cat /etc/hostname >/dev/null && echo ok"}),
            "1000\nok\n");
}

// A container that asks for no masked or read-only paths gets berth's defaults: the kernel's
// memory, keys and timers are hidden, /proc/sys and sysrq are read-only; a privileged one is
// unmasked. On cgroup v2 hosts /sys/fs/cgroup shows the container's own cgroup as its root.
TEST_F(Security, DefaultMaskedPathsAndCgroupNamespaceHoldInsideAContainer) {
  (void)ready();
  std::string id = run(shell_container("masked", "sleep 1000"));
  // Those of the masked files this kernel has, each read empty inside; /sys/firmware empty.
  std::string script, expected;
  for (const char* f : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug"}) {
    if (!fs::exists(f)) continue;
    // Masked (empty), or unreadable where AppArmor's default profile denies it as well.
    script += std::string("(wc -c < ") + f + " || echo 0) 2>/dev/null; ";
    expected += "0\n";
  }
  ASSERT_FALSE(read_file("/proc/keys").empty());  // the host's is not empty: the masking is what shows
  std::string out = exec_out(
      id, {"sh", "-c",
           script + "ls /sys/firmware | wc -l; echo 1 > /proc/sys/kernel/core_uses_pid 2>/dev/null && "
                    "echo sys-writable; echo b > /proc/sysrq-trigger 2>/dev/null && echo sysrq-writable; echo done"});
  EXPECT_EQ(out, expected + "0\ndone\n");
  if (host_cgroup_v2()) {
    // The container's /proc/self/cgroup is "0::/" in a cgroup namespace of its own.
    EXPECT_EQ(exec_out(id, {"cat", "/proc/self/cgroup"}), "0::/\n");
  } else {
    std::printf("cgroup v1 host: the cgroup namespace (a cgroup v2 default) is covered by the OCI spec unit test\n");
  }
}

// A pod whose cgroup parent did not exist gets it made by the runtime; berth removes it (and its
// missing ancestors) with the pod, and not while another pod still uses it.
TEST_F(Security, CgroupParentsMadeForAPodGoWithIt) {
  auto& cri = ready();
  const std::string top = "/berth-made-parent-" + std::to_string(::getpid());
  auto c = test_pod("parented");
  c.mutable_linux()->set_cgroup_parent(top + "/a/b");
  auto other = test_pod("parented-too");
  other.mutable_linux()->set_cgroup_parent(top + "/a/b");
  std::string first, second;
  ASSERT_OK(cri.run_pod(c, &first));
  ASSERT_OK(cri.run_pod(other, &second));
  ASSERT_TRUE(fs::exists(host_cgroup_dir(top + "/a/b/" + first, "memory")));
  ASSERT_OK(cri.remove_pod(first));
  EXPECT_TRUE(fs::exists(host_cgroup_dir(top + "/a/b/" + second, "memory")));  // still in use
  ASSERT_OK(cri.remove_pod(second));
  for (const auto& h : host_cgroup_roots()) EXPECT_FALSE(fs::exists(h + top)) << h;
  // A refused pod (runc fails late) leaves no parent either.
  TempDir dir;
  write_file(dir / "bad.json", R"({"defaultAction":"SCMP_ACT_NO_SUCH_ACTION"})");
  auto late = test_pod("late");
  late.mutable_linux()->set_cgroup_parent(top + "/late");
  late.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(v1::SecurityProfile::Localhost);
  late.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_localhost_ref(dir / "bad.json");
  std::string id;
  EXPECT_FALSE(cri.run_pod(late, &id).ok());
  for (const auto& h : host_cgroup_roots()) EXPECT_FALSE(fs::exists(h + top)) << h;
}

// A registry's Bearer challenge may not send berth, or the credentials it was given, anywhere:
// a realm that is not http(s) is refused, credentials never go in clear to another host, and a
// blob redirected to a file:// URL is not read. Nothing is fetched from anywhere but 127.0.0.1.
TEST_F(Security, RegistryChallengesAndRedirectsCannotLeadBerthAstray) {
  (void)ready();
  struct Case {
    std::vector<std::string> proxy_options;
    bool with_credentials;
    std::string expect;
  };
  std::vector<Case> cases = {
      {{"--realm", "ftp://127.0.0.1:21/token"}, false, "is not an http(s) URL"},
      {{"--realm", "file:///etc/shadow"}, true, "is not an http(s) URL"},
      {{"--realm", "http://192.0.2.1:9/token"}, true, "refusing to send credentials over plain http to 192.0.2.1:9"},
  };
  for (const auto& k : cases) {
    int port = free_loopback_port();
    std::vector<std::string> args{std::to_string(port), registry_->url(), "tokenuser", "tok3n-pw"};
    args.insert(args.end(), k.proxy_options.begin(), k.proxy_options.end());
    ScriptServer proxy("token-proxy.py", args, port);
    grpc::ClientContext ctx;
    v1::PullImageRequest req;
    req.mutable_image()->set_image("127.0.0.1:" + std::to_string(port) + "/test/busybox:latest");
    if (k.with_credentials) {
      req.mutable_auth()->set_username("tokenuser");
      req.mutable_auth()->set_password("tok3n-pw");
    }
    v1::PullImageResponse resp;
    grpc::Status s = cri_->images().PullImage(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << k.proxy_options[1] << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(k.expect), std::string::npos) << s.error_message();
  }
  // Blobs redirected to a local file: curl may follow http(s) only. (The image goes first, so its
  // blobs must be fetched again.)
  ASSERT_OK(cri_->remove_image(image()));
  int port = free_loopback_port();
  ScriptServer proxy("token-proxy.py",
                     {std::to_string(port), registry_->url(), "-", "-", "--redirect-blobs", "file:///etc/hostname"},
                     port);
  grpc::Status s = cri_->pull_image("127.0.0.1:" + std::to_string(port) + "/test/busybox:latest");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("Unsupported protocol"), std::string::npos) << s.error_message();
}

// An image whose /etc/passwd is a FIFO (reading would block a gRPC thread for ever) or a symlink
// out of the image onto the host: CreateContainer that looks a user up there answers at once with
// INVALID_ARGUMENT, reads nothing of the host, and leaves nothing behind.
TEST_F(Security, HostileImageFilesNeitherBlockNorReachTheHost) {
  auto& cri = ready();
  push_test_images(registry_->url(), {"--only", "hostile"});
  const std::string fifo = registry_->host() + "/test/hostile-etc:fifo",
                    links = registry_->host() + "/test/hostile-etc:links";
  ASSERT_OK(cri.pull_image(fifo));
  ASSERT_OK(cri.pull_image(links));
  auto host_before = census(*d_);
  struct Case {
    std::string image, expect;
  } cases[] = {{fifo, "etc/passwd in the image is not a regular file"},
               // Resolved inside the image, the link points at itself: a loop, never the host's file.
               {links, "open etc/passwd in the image: ELOOP"}};
  for (const auto& k : cases) {
    auto c = test_container("lookup", k.image, {"/bin/sh", "-c", "id"});
    c.mutable_linux()->mutable_security_context()->set_run_as_username("root");
    std::string id;
    auto started = std::chrono::steady_clock::now();
    grpc::Status s = cri.create_container(pod_, c, &id, pod_config_);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 10s) << k.image;
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << k.image << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(k.expect), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(cri.list_containers().empty());
  EXPECT_EQ(census(*d_), host_before);
}

}  // namespace
}  // namespace berth::test
