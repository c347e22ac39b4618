// Containers on a real berthd with runc and berth-monitor, from a busybox image the project builds
// and serves from a local docker-registry: lifecycle, CRI log files, exit codes, stop grace,
// ExecSync, the OCI spec as seen from inside, resources, OOM, a berthd restart and the filters.
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <fstream>
#include <regex>
#include <thread>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_cgroup.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Containers : public PodFixture {};

// "<timestamp> <stream> <tag> <content>" lines, without the timestamps (checked separately). The
// regex sees the fixed-length head only: libstdc++'s matcher recurses once per character, and a
// long line's content overflowed the stack of the unoptimised, sanitized test build.
std::vector<std::string> log_records(const std::string& text) {
  static const std::regex head(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (stdout|stderr) [FP] )");
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    const size_t stream_at = l.find(' ') + 1;  // 0 when there is no space: no match below
    const size_t tag_at = l.find(' ', stream_at) + 1;
    const size_t content_at = tag_at + 2;
    if (stream_at == 0 || tag_at == 0 || content_at > l.size() || !std::regex_match(l.substr(0, content_at), head)) {
      out.push_back("MALFORMED: " + l.substr(0, 80));
      continue;
    }
    out.push_back(l.substr(stream_at, tag_at - 1 - stream_at) + " " + l[tag_at] + " " + l.substr(content_at));
  }
  return out;
}

TEST_F(Containers, LifecycleFromAPulledImage) {
  auto& cri = ready();
  std::string id;
  // The shell is its PID namespace's init, which the kernel spares signals it does not handle.
  auto config = shell_container("life", "trap 'exit 0' TERM; echo hello; while true; do sleep 0.1; done");
  ASSERT_OK(cri.create_container(pod_, config, &id, pod_config_));
  auto st = status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_CREATED);
  EXPECT_GT(st.created_at(), 0);
  EXPECT_EQ(st.started_at(), 0);
  EXPECT_EQ(st.metadata().name(), "life");
  EXPECT_EQ(st.image().image(), image());
  EXPECT_EQ(st.image_id().rfind("sha256:", 0), 0u);
  EXPECT_NE(st.image_ref(), "");
  EXPECT_EQ(st.log_path(), logs_->path() + "/life.log");
  EXPECT_TRUE(fs::exists(st.log_path()));  // made at create
  EXPECT_EQ(st.labels().at("container"), "life");
  ASSERT_OK(cri.start_container(id));
  st = status(id, true);
  EXPECT_EQ(st.state(), v1::CONTAINER_RUNNING);
  EXPECT_GT(st.started_at(), st.created_at());
  ASSERT_TRUE(wait_for_file_text(st.log_path(), "stdout F hello\n"));
  v1::ContainerStatusResponse verbose;
  ASSERT_OK(cri.container_status(id, &verbose, true));
  auto info = nlohmann::json::parse(verbose.info().at("info"));
  int pid = info["pid"];
  EXPECT_GT(pid, 0);
  EXPECT_NE(info["runtimeSpec"]["process"]["args"][2].get<std::string>().find("echo hello"), std::string::npos);
  // It runs in the pod's network namespace.
  EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/net"),
            fs::read_symlink("/proc/" +
                             std::to_string(std::stoi(shell("cat " + d_->state() + "/sandboxes/" + pod_ + "/pid"))) +
                             "/ns/net"));
  ASSERT_OK(cri.stop_container(id, 10));
  st = status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 0);  // its TERM trap ran
  EXPECT_EQ(st.reason(), "Completed");
  EXPECT_GE(st.finished_at(), st.started_at());
  ASSERT_OK(cri.stop_container(id, 10));  // idempotent
  ASSERT_OK(cri.remove_container(id));
  EXPECT_TRUE(cri.list_containers().empty());
  EXPECT_FALSE(fs::exists(d_->state() + "/containers/" + id));
  EXPECT_FALSE(fs::exists(d_->root() + "/containers/" + id));
  ASSERT_OK(cri.remove_container(id));  // unknown now: still fine
  v1::ContainerStatusResponse gone;
  EXPECT_EQ(cri.container_status(id, &gone).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(Containers, LogFileLinesAreExact) {
  auto& cri = ready();
  // Both streams, a partial last line, CRLF, and a 1 MiB line (64 chunks of 16 KiB).
  std::string id = run(shell_container(
      "logs",
      "echo out-1; echo err-1 >&2; printf 'crlf\\r\\n'; yes x | tr -d '\\n' | head -c 1048576; echo; printf tail"));
  auto st = wait_exited(id);
  EXPECT_EQ(st.exit_code(), 0);
  EXPECT_EQ(st.reason(), "Completed");
  auto recs = log_records(log_of("logs"));
  ASSERT_GE(recs.size(), 3u + 64u + 1u);
  std::vector<std::string> head(recs.begin(), recs.begin() + 3);
  // stdout and stderr are separate pipes: only the order within each stream is fixed.
  EXPECT_NE(std::find(head.begin(), head.end(), "stdout F out-1"), head.end());
  EXPECT_NE(std::find(head.begin(), head.end(), "stderr F err-1"), head.end());
  EXPECT_NE(std::find(head.begin(), head.end(), "stdout F crlf"), head.end());
  std::string chunk(16384, 'x');
  size_t big = 3;
  for (size_t i = 0; i < 63; ++i) EXPECT_EQ(recs[big + i], "stdout P " + chunk) << i;
  EXPECT_EQ(recs[big + 63], "stdout F " + chunk);
  EXPECT_EQ(recs[big + 64], "stdout P tail");  // the unterminated last fragment
  EXPECT_EQ(recs.size(), big + 65);
  ASSERT_OK(cri.remove_container(id));
}

TEST_F(Containers, ReopenContainerLogAfterARename) {
  auto& cri = ready();
  std::string id = run(shell_container("rot", "i=0; while true; do echo line-$i; i=$((i+1)); sleep 0.05; done"));
  std::string path = logs_->path() + "/rot.log";
  ASSERT_TRUE(wait_for_file_text(path, "line-3\n"));
  fs::rename(path, path + ".1");
  ASSERT_OK(cri.reopen_log(id));
  EXPECT_TRUE(fs::exists(path));  // exists when the call returns
  ASSERT_TRUE(wait_for_file_text(path, "stdout F line-"));
  std::string old_text = read_file(path + ".1"), new_text = read_file(path);
  // No line is in both files, and the new file goes on where the old one stopped.
  auto last_old = log_records(old_text).back(), first_new = log_records(new_text).front();
  int a = std::stoi(last_old.substr(last_old.find('-') + 1)), b = std::stoi(first_new.substr(first_new.find('-') + 1));
  EXPECT_EQ(b, a + 1) << last_old << " / " << first_new;
  ASSERT_OK(cri.stop_container(id, 0));
  // Not running: an error, and no file appears.
  fs::remove(path);
  EXPECT_EQ(cri.reopen_log(id).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(Containers, ExitCodesAndAStartFailure) {
  auto& cri = ready();
  std::string three = run(shell_container("three", "exit 3"));
  auto st = wait_exited(three);
  EXPECT_EQ(st.exit_code(), 3);
  EXPECT_EQ(st.reason(), "Error");
  std::string killed = run(test_container("killed", image(), {"sleep", "1000"}));
  v1::ContainerStatusResponse v;
  ASSERT_OK(cri.container_status(killed, &v, true));
  ASSERT_EQ(::kill(nlohmann::json::parse(v.info().at("info"))["pid"].get<int>(), SIGKILL), 0);
  st = wait_exited(killed);
  EXPECT_EQ(st.exit_code(), 137);
  EXPECT_EQ(st.reason(), "Error");
  // An executable that does not exist: StartContainer fails, the container is EXITED with why.
  std::string id;
  ASSERT_OK(cri.create_container(pod_, test_container("missing", image(), {"/no/such/binary"}), &id, pod_config_));
  grpc::Status s = cri.start_container(id);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("/no/such/binary"), std::string::npos) << s.error_message();
  st = status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.reason(), "StartError");
  EXPECT_NE(st.message().find("/no/such/binary"), std::string::npos) << st.message();
  EXPECT_EQ(cri.start_container(id).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  for (const auto& c : cri.list_containers()) ASSERT_OK(cri.remove_container(c.id()));
}

// As containerd deletes a task at its exit: the runtime's state of a container that ended goes
// then, on berthd's own, not in RemoveContainer; its status stays what the exit left.
TEST_F(Containers, TheRuntimesStateOfAnExitedContainerGoesAtItsExit) {
  auto& cri = ready();
  std::string id = run(shell_container("brief", "exit 4"));
  auto st = wait_exited(id);
  ASSERT_EQ(st.state(), v1::CONTAINER_EXITED);
  const std::string runtime_state = d_->state() + "/runtime/" + test_runtime() + "/" + id;
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {
    gone = !fs::exists(runtime_state);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << runtime_state << " is still there";
  st = status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 4);
  EXPECT_EQ(st.reason(), "Error");
  ASSERT_OK(cri.remove_container(id));
  EXPECT_TRUE(cri.list_containers().empty());
}

// The delete at the exit runs beside the rpcs: StopContainer and StopPodSandbox of a pod whose
// container exited answer while that delete is still under way (held here by a runtime wrapper
// until the pod is stopped); RemoveContainer is the one that waits for it.
TEST_F(Containers, StoppingThePodDoesNotWaitForTheDeleteAtAContainersExit) {
  TempDir hold;
  const std::string dir = hold.path();
  // Not saying it is runc: berthd would delete the exited container itself, as runc does.
  write_file(hold / "runc-held",
             "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'held version 1 (a runc wrapper)'; exit 0; }\n"
             "del=; for a; do [ \"$a\" = delete ] && del=1; last=$a; done\n"
             "if [ -n \"$del\" ] && [ -e \"" +
                 dir +
                 "/hold-$last\" ]; then\n"
                 "  : > \"" +
                 dir + "/begun\"; while [ ! -e \"" + dir +
                 "/released\" ]; do sleep 0.02; done\nfi\n"
                 "exec runc \"$@\"\n",
             0755);
  // Whatever happens below, the held delete goes on before the fixture removes the pods.
  struct Release {
    std::string path;
    ~Release() { write_file(path, ""); }
  } release{dir + "/released"};
  auto& cri = ready("pod", {.config_toml = "[runtimes.runc]\npath = \"runc\"\n[runtimes.held]\npath = \"" +
                                           (hold / "runc-held") + "\"\nhost_processes = true\n"});
  auto pod = test_pod("held");
  pod.set_log_directory(logs_->path());
  std::string pod_id, id;
  ASSERT_OK(cri.run_pod(pod, &pod_id, "held"));
  ASSERT_OK(cri.create_container(pod_id, shell_container("held", "sleep 1000"), &id, pod));
  ASSERT_OK(cri.start_container(id));
  write_file(hold / ("hold-" + id), "");
  ASSERT_OK(cri.stop_container(id, 0));
  bool begun = false;
  for (int i = 0; i < 1000 && !begun; ++i) {
    begun = fs::exists(hold / "begun");
    if (!begun) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(begun) << "the runtime's delete at the exit did not begin";
  // With deadlines: a call that waited for the held delete fails rather than hangs the test.
  auto in_time = [](grpc::ClientContext& ctx) -> grpc::ClientContext& {
    ctx.set_deadline(std::chrono::system_clock::now() + 30s);
    return ctx;
  };
  {
    grpc::ClientContext ctx;
    v1::StopContainerRequest req;
    req.set_container_id(id);
    v1::StopContainerResponse resp;
    ASSERT_OK(cri.runtime().StopContainer(&in_time(ctx), req, &resp));
  }
  {
    grpc::ClientContext ctx;
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(pod_id);
    v1::StopPodSandboxResponse resp;
    ASSERT_OK(cri.runtime().StopPodSandbox(&in_time(ctx), req, &resp));
  }
  const std::string runtime_state = d_->state() + "/runtime/held/" + id;
  EXPECT_TRUE(fs::exists(runtime_state)) << "the delete was not held: the test proves nothing";
  EXPECT_EQ(status(id).state(), v1::CONTAINER_EXITED);
  write_file(hold / "released", "");
  ASSERT_OK(cri.remove_container(id));
  EXPECT_FALSE(fs::exists(runtime_state));
  ASSERT_OK(cri.remove_pod(pod_id));
}

TEST_F(Containers, StopWaitsTheGraceThenKills) {
  auto& cri = ready();
  std::string id = run(shell_container("stubborn", "trap 'echo got TERM' TERM; while true; do sleep 0.1; done"));
  std::string path = logs_->path() + "/stubborn.log";
  std::this_thread::sleep_for(200ms);  // let the shell install its trap
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_OK(cri.stop_container(id, 2));
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto st = status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.exit_code(), 137);
  EXPECT_GE(waited, 1.9);  // the grace period was given (a lower bound, not a timing assertion)
  EXPECT_TRUE(wait_for_file_text(path, "got TERM"));
  // The image's default stop signal is SIGTERM; the config may name another.
  auto quit = shell_container("quit", "trap 'echo got QUIT; exit 7' QUIT; while true; do sleep 0.1; done");
  v1::Signal sigquit = v1::RUNTIME_DEFAULT;
  ASSERT_TRUE(v1::Signal_Parse("SIGQUIT", &sigquit));
  quit.set_stop_signal(sigquit);
  std::string q = run(quit);
  std::this_thread::sleep_for(200ms);
  ASSERT_OK(cri.stop_container(q, 10));
  EXPECT_EQ(status(q).exit_code(), 7);
  for (const auto& c : cri.list_containers()) ASSERT_OK(cri.remove_container(c.id()));
}

TEST_F(Containers, ExecSyncOutputExitCodeAndTimeout) {
  auto& cri = ready();
  std::string id = run(shell_container("exec", "sleep 1000"));
  v1::ExecSyncResponse r;
  ASSERT_TRUE(cri.exec_sync(id, {"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 5"}, &r, 10).ok());
  EXPECT_EQ(r.stdout(), "to-out\n");
  EXPECT_EQ(r.stderr(), "to-err\n");
  EXPECT_EQ(r.exit_code(), 5);
  auto t0 = std::chrono::steady_clock::now();
  grpc::Status s = cri.exec_sync(id, {"/bin/sh", "-c", "echo $$ > /tmp/sleeper; exec sleep 1000"}, &r, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("timed out after 1s"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
  // The timed-out command is gone from the container.
  // (It may stay a zombie: the container's init here is `sleep`, which reaps nobody.)
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c",
                          "case \"$(grep State /proc/$(cat /tmp/sleeper)/status 2>/dev/null)\" in *zombie*|'') echo "
                          "gone;; *) echo alive;; esac"}),
            "gone\n");
  // Output is capped, not buffered without bound: 20 MiB of output gives what fits one CRI
  // message (16 MiB, less room for the rest of the response).
  ASSERT_OK(cri.exec_sync(id, {"/bin/sh", "-c", "head -c 20971520 /dev/zero; echo err >&2"}, &r, 30));
  EXPECT_EQ(r.stdout().size() + r.stderr().size(), (16u << 20) - 4096);
  EXPECT_EQ(cri.exec_sync(id, {}, &r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  s = cri.exec_sync(id, {"/no/such/tool"}, &r, 10);
  EXPECT_FALSE(s.ok() && r.exit_code() == 0);
  ASSERT_OK(cri.stop_container(id, 0));
  EXPECT_EQ(cri.exec_sync(id, {"true"}, &r).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(Containers, SpecAsSeenFromInside) {
  auto& cri = ready();
  TempDir host;
  fs::permissions(host.path(), fs::perms(0755));
  write_file(host / "data.txt", "from the host\n");
  auto c = shell_container("inside", "sleep 1000");
  c.set_working_dir("/tmp");
  auto* env = c.add_envs();
  env->set_key("GREETING");
  env->set_value("hi there");
  auto* sc = c.mutable_linux()->mutable_security_context();
  sc->set_run_as_username("app");
  sc->add_supplemental_groups(4242);
  sc->mutable_capabilities()->add_drop_capabilities("ALL");
  sc->mutable_capabilities()->add_add_capabilities("NET_BIND_SERVICE");
  sc->mutable_seccomp()->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  sc->set_no_new_privs(true);
  for (const auto& p : {"/proc/timer_list", "/proc/keys"}) sc->add_masked_paths(p);
  sc->add_readonly_paths("/proc/sys");
  auto* m = c.add_mounts();
  m->set_container_path("/data");
  m->set_host_path(host.path());
  m->set_readonly(true);
  (*c.mutable_annotations())["berth.test/note"] = "kept";
  std::string id = run(c);
  EXPECT_EQ(exec_out(id, {"id"}), "uid=1000(app) gid=1000(app) groups=44(video),4242\n");
  // The status tells the same: the user the process runs as, the mounts, the annotations.
  v1::ContainerStatus cs = status(id);
  EXPECT_EQ(cs.user().linux().uid(), 1000);
  EXPECT_EQ(cs.user().linux().gid(), 1000);
  EXPECT_EQ(std::vector<int64_t>(cs.user().linux().supplemental_groups().begin(),
                                 cs.user().linux().supplemental_groups().end()),
            (std::vector<int64_t>{44, 4242}));  // as `id` lists them
  ASSERT_EQ(cs.mounts_size(), 1);
  EXPECT_EQ(cs.mounts(0).container_path(), "/data");
  EXPECT_EQ(cs.mounts(0).host_path(), host.path());
  EXPECT_TRUE(cs.mounts(0).readonly());
  EXPECT_EQ(cs.annotations().at("berth.test/note"), "kept");
  EXPECT_EQ(exec_out(id, {"pwd"}), "/tmp\n");
  std::string environ = exec_out(id, {"env"});
  EXPECT_NE(environ.find("GREETING=hi there\n"), std::string::npos) << environ;
  EXPECT_NE(environ.find("HOSTNAME=pod\n"), std::string::npos) << environ;
  EXPECT_NE(environ.find("PATH=/bin\n"), std::string::npos) << environ;  // the image's
  EXPECT_EQ(exec_out(id, {"cat", "/data/data.txt"}), "from the host\n");
  v1::ExecSyncResponse r;
  ASSERT_OK(cri.exec_sync(id, {"touch", "/data/new"}, &r, 10));
  EXPECT_NE(r.exit_code(), 0);  // read-only mount
  std::string st = exec_out(id, {"cat", "/proc/1/status"});
  EXPECT_NE(st.find("CapBnd:\t0000000000000400"), std::string::npos) << st;  // NET_BIND_SERVICE only
  EXPECT_NE(st.find("Seccomp:\t2"), std::string::npos) << st;
  EXPECT_NE(st.find("NoNewPrivs:\t1"), std::string::npos) << st;
  ASSERT_OK(cri.exec_sync(id, {"wc", "-c", "/proc/timer_list"}, &r, 10));
  EXPECT_EQ(r.stdout(), "0 /proc/timer_list\n") << r.stderr();  // masked
  EXPECT_EQ(exec_out(id, {"hostname"}), "pod\n");
  EXPECT_EQ(exec_out(id, {"cat", "/etc/resolv.conf"}), read_file(d_->state() + "/sandboxes/" + pod_ + "/resolv.conf"));
  EXPECT_NE(exec_out(id, {"/bin/sh", "-c", "grep ' /proc/sys ' /proc/self/mounts"}).find(" ro,"), std::string::npos);

  // A root container with the default capabilities, a read-only rootfs, no masked paths.
  auto ro = shell_container("readonly", "sleep 1000");
  ro.mutable_linux()->mutable_security_context()->set_readonly_rootfs(true);
  auto* dev = ro.add_devices();
  dev->set_host_path("/dev/null");
  dev->set_container_path("/dev/berth-null");
  dev->set_permissions("rw");
  std::string rid = run(ro);
  EXPECT_EQ(exec_out(rid, {"stat", "-c", "%t:%T", "/dev/berth-null"}), "1:3\n");
  ASSERT_OK(cri.exec_sync(rid, {"/bin/sh", "-c", "echo x > /dev/berth-null"}, &r, 10));
  EXPECT_EQ(r.exit_code(), 0) << r.stderr();
  ASSERT_OK(cri.exec_sync(rid, {"touch", "/newfile"}, &r, 10));
  EXPECT_NE(r.exit_code(), 0);
  EXPECT_NE(r.stderr().find("Read-only file system"), std::string::npos) << r.stderr();
  EXPECT_NE(exec_out(rid, {"cat", "/proc/1/status"}).find("CapEff:\t00000000a80425fb"), std::string::npos);
  // No lists asked for: berth's defaults mask it (empty lists unmask only in a user namespace).
  EXPECT_EQ(exec_out(rid, {"wc", "-c", "/proc/timer_list"}), "0 /proc/timer_list\n");
  for (const auto& x : cri.list_containers()) ASSERT_OK(cri.remove_container(x.id()));
}

// device_ownership_from_security_context: a device given to a non-root container (here a null
// device node of the host, root's and 0600, as GPUs' often are) keeps its host owner by default,
// so the container cannot open it; with the key on it is owned by the container's uid and gid.
TEST_F(Containers, DeviceOwnershipFromTheSecurityContext) {
  TempDir host;
  const std::string node = host / "private-null";
  ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0600, makedev(1, 3)), 0) << std::strerror(errno);
  auto config = shell_container("gpu-user", "sleep 1000");
  auto* sc = config.mutable_linux()->mutable_security_context();
  sc->mutable_run_as_user()->set_value(1000);
  sc->mutable_run_as_group()->set_value(2000);
  auto* dev = config.add_devices();
  dev->set_host_path(node);
  dev->set_container_path("/dev/accel0");
  dev->set_permissions("rw");
  const std::vector<std::string> write = {"/bin/sh", "-c", "echo x > /dev/accel0"};
  for (bool owned : {false, true}) {
    SCOPED_TRACE(owned ? "on" : "off (default)");
    auto& cri = ready("dev-" + std::to_string(owned),
                      {.config_toml = owned ? "device_ownership_from_security_context = true\n" : ""});
    std::string id = run(config);
    EXPECT_EQ(exec_out(id, {"stat", "-c", "%u:%g %a %t:%T", "/dev/accel0"}),
              std::string(owned ? "1000:2000" : "0:0") + " 600 1:3\n");
    v1::ExecSyncResponse r;
    ASSERT_OK(cri.exec_sync(id, write, &r, 10));
    EXPECT_EQ(r.exit_code() == 0, owned) << r.stderr();
    ASSERT_OK(cri.remove_container(id));
  }
}

TEST_F(Containers, RuntimeDefaultSeccompRefusesNamespacesUnlessSysAdmin) {
  auto& cri = ready();
  auto confined = shell_container("confined", "sleep 1000");
  confined.mutable_linux()->mutable_security_context()->mutable_seccomp()->set_profile_type(
      v1::SecurityProfile::RuntimeDefault);
  auto admin = confined;
  admin.mutable_metadata()->set_name("admin");
  admin.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities("SYS_ADMIN");
  // Where AppArmor is on, its default profile denies mount whatever the capabilities (as
  // containerd's does): this test is about the seccomp filter, so both go without it.
  for (auto* c : {&confined, &admin})
    c->mutable_linux()->mutable_security_context()->mutable_apparmor()->set_profile_type(
        v1::SecurityProfile::Unconfined);
  std::string c = run(confined), a = run(admin);
  v1::ExecSyncResponse r;
  // A user namespace needs no capability from the kernel: only the filter stops it.
  for (const char* cmd : {"busybox unshare -U true", "busybox unshare -n true"}) {
    ASSERT_OK(cri.exec_sync(c, {"/bin/sh", "-c", cmd}, &r, 10));
    EXPECT_NE(r.exit_code(), 0) << cmd;
    EXPECT_NE(r.stderr().find("not permitted"), std::string::npos) << cmd << ": " << r.stderr();
  }
  // mount is refused without CAP_SYS_ADMIN, allowed with it.
  ASSERT_OK(cri.exec_sync(c, {"/bin/sh", "-c", "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m"}, &r, 10));
  EXPECT_NE(r.exit_code(), 0);
  ASSERT_OK(cri.exec_sync(
      a, {"/bin/sh", "-c", "busybox unshare -n true && mkdir -p /tmp/m && mount -t tmpfs none /tmp/m"}, &r, 10));
  EXPECT_EQ(r.exit_code(), 0) << r.stderr();
}

TEST_F(Containers, MountPropagationFollowsTheHost) {
  auto& cri = ready();
  TempDir host;
  fs::create_directories(host / "shared");
  // A shared mount on the host: a mount made under it later shows up in an rslave container.
  ASSERT_EQ(shell("mount --bind " + host / "shared" + " " + host / "shared" + " && mount --make-shared " +
                  host / "shared" + " && echo ok"),
            "ok\n");
  auto c = shell_container("prop", "sleep 1000");
  auto* m = c.add_mounts();
  m->set_container_path("/shared");
  m->set_host_path(host / "shared");
  m->set_propagation(v1::PROPAGATION_HOST_TO_CONTAINER);
  std::string id = run(c);
  fs::create_directories(host / "shared/sub");
  shell("mount -t tmpfs -o size=1m tmpfs " + host / "shared/sub");
  write_file(host / "shared/sub/seen", "propagated\n");
  EXPECT_EQ(exec_out(id, {"cat", "/shared/sub/seen"}), "propagated\n");
  // Bidirectional needs a shared host mount; a private one is refused, naming the field.
  TempDir priv;
  auto b = shell_container("bidir", "sleep 1000");
  auto* bm = b.add_mounts();
  bm->set_container_path("/p");
  bm->set_host_path(priv.path());
  bm->set_propagation(v1::PROPAGATION_BIDIRECTIONAL);
  std::string bid;
  grpc::Status s = cri.create_container(pod_, b, &bid, pod_config_);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("config.mounts[0].propagation"), std::string::npos) << s.error_message();
  ASSERT_OK(cri.remove_container(id));
  shell("umount " + host / "shared/sub" + "; umount " + host / "shared");
}

TEST_F(Containers, ResourcesAreAppliedAndUpdatedLive) {
  auto& cri = ready();
  auto c = shell_container("res", "sleep 1000");
  auto* r = c.mutable_linux()->mutable_resources();
  r->set_cpu_shares(256);
  r->set_cpu_quota(50000);
  r->set_cpu_period(100000);
  r->set_memory_limit_in_bytes(64 << 20);
  std::string id = run(c);
  std::string cg = test_cgroup_parent() + "/" + id;
  const bool v2 = host_cgroup_v2();
  // v1 files, or v2's: 256 shares are weight 10, a quota is "<quota> <period>" in cpu.max.
  auto shares = [&] { return read_file(host_cgroup_file(cg, "cpu", "cpu.shares", "cpu.weight")); };
  auto quota = [&] {
    std::string q = read_file(host_cgroup_file(cg, "cpu", "cpu.cfs_quota_us", "cpu.max"));
    return v2 ? q.substr(0, q.find(' ')) + "\n" : q;
  };
  auto memory = [&] { return read_file(host_cgroup_file(cg, "memory", "memory.limit_in_bytes", "memory.max")); };
  const std::string weight_256 = v2 ? "10\n" : "256\n";
  EXPECT_EQ(shares(), weight_256);
  EXPECT_EQ(quota(), "50000\n");
  EXPECT_EQ(memory(), std::to_string(64 << 20) + "\n");
  v1::LinuxContainerResources update;
  update.set_memory_limit_in_bytes(96 << 20);
  update.set_cpu_quota(20000);
  ASSERT_OK(cri.update_resources(id, update));
  EXPECT_EQ(memory(), std::to_string(96 << 20) + "\n");
  EXPECT_EQ(quota(), "20000\n");
  EXPECT_EQ(shares(), weight_256);  // kept: not in the update
  auto st = status(id);
  EXPECT_EQ(st.resources().linux().memory_limit_in_bytes(), 96 << 20);
  EXPECT_EQ(st.resources().linux().cpu_shares(), 256);
  // In-place resize down, then below what the container uses: refused before the runtime is
  // asked (cgroup v2 would reclaim and OOM-kill instead of refusing), the limit left as it was.
  update.set_memory_limit_in_bytes(48 << 20);
  ASSERT_OK(cri.update_resources(id, update));
  EXPECT_EQ(memory(), std::to_string(48 << 20) + "\n");
  v1::LinuxContainerResources tiny;
  tiny.set_memory_limit_in_bytes(4096);
  grpc::Status below = cri.update_resources(id, tiny);
  EXPECT_EQ(below.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << below.error_message();
  EXPECT_NE(below.error_message().find("memory_limit_in_bytes: memory limit 4096 is below the current memory use"),
            std::string::npos)
      << below.error_message();
  EXPECT_EQ(memory(), std::to_string(48 << 20) + "\n");
  EXPECT_EQ(status(id).resources().linux().memory_limit_in_bytes(), 48 << 20);
  // Unified keys are for v2 hosts; a v1 host refuses them naming the field.
  v1::LinuxContainerResources unified;
  unified.mutable_unified()->insert({"memory.high", "41943040"});
  grpc::Status s = cri.update_resources(id, unified);
  if (v2) {
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(read_file(host_cgroup_file(cg, "memory", "", "memory.high")), "41943040\n");
  } else {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("unified"), std::string::npos);
  }
  ASSERT_OK(cri.remove_container(id));
}

TEST_F(Containers, OutOfMemoryIsReportedAsOOMKilled) {
  auto& cri = ready();
  auto c = shell_container("oom", "echo start; x=$(head -c 134217728 /dev/zero | tr '\\0' x); echo never");
  c.mutable_linux()->mutable_resources()->set_memory_limit_in_bytes(16 << 20);
  std::string id = run(c);
  auto st = wait_exited(id, 60s);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.reason(), "OOMKilled");
  EXPECT_NE(st.exit_code(), 0);
  ASSERT_OK(cri.remove_container(id));
}

TEST_F(Containers, StopRecordsTheExitWhenTheMonitorCannotTellIt) {
  auto& cri = ready();
  std::string id = run(shell_container("mute", "sleep 100000"));
  v1::ContainerStatusResponse verbose;
  ASSERT_OK(cri.container_status(id, &verbose, true));
  int pid = nlohmann::json::parse(verbose.info().at("info"))["pid"].get<int>();
  // The container's parent is its monitor; a stopped monitor reports nothing.
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  int monitor = std::atoi(stat.substr(stat.rfind(')') + 4).c_str());
  ASSERT_GT(monitor, 1);
  ASSERT_EQ(::kill(monitor, SIGSTOP), 0);
  std::unique_ptr<int, void (*)(int*)> resume(&monitor, [](int* m) { ::kill(*m, SIGCONT); });
  // After the wait for SIGKILL's exit runs out, the runtime's "stopped" is enough.
  ASSERT_OK(cri.stop_container(id, 0));
  auto st = status(id);
  EXPECT_EQ(st.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st.reason(), "Unknown") << st.message();
  ASSERT_OK(cri.remove_container(id));
}

TEST_F(Containers, ContainersOutliveABerthdKill) {
  TempDir& shared = scratch();
  auto net = std::make_shared<TestNetwork>();
  std::string root = shared / "root", state = shared / "state";
  std::string id, quitter;
  {
    DaemonProcess& first = daemon_at({.network = net}, shared / "a.sock", root, state);
    CriClient cri(first);
    ASSERT_OK(cri.pull_image(image()));
    pod_config_ = test_pod("survivor");
    pod_config_.set_log_directory(logs_->path());
    ASSERT_OK(cri.run_pod(pod_config_, &pod_));
    cri_ = std::make_unique<CriClient>(first);
    id = run(shell_container("tick",
                             "i=0; while [ ! -e /tmp/stop ]; do echo tick-$i; i=$((i+1)); sleep 0.05; done; exit 42"));
    // Exits on its own while berthd is down.
    quitter = run(shell_container("quitter", "while [ ! -e /tmp/go ]; do sleep 0.05; done; echo bye; exit 7"));
    ASSERT_TRUE(wait_for_file_text(logs_->path() + "/tick.log", "tick-2\n"));
    first.stop(SIGKILL);
  }
  // berthd is gone: the container goes on and its log keeps growing; the other one exits.
  size_t before = read_file(logs_->path() + "/tick.log").size();
  int64_t down_since =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  write_file(state + "/containers/" + quitter + "/rootfs/tmp/go", "");  // through its rootfs mount
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/quitter.log", "bye\n"));
  for (int i = 0; i < 500 && !std::filesystem::exists(state + "/containers/" + quitter + "/exit.json"); ++i)
    std::this_thread::sleep_for(20ms);  // the monitor records the exit
  std::this_thread::sleep_for(300ms);
  EXPECT_GT(read_file(logs_->path() + "/tick.log").size(), before);
  DaemonProcess& second = daemon_at({.network = net}, shared / "b.sock", root, state);
  cri_ = std::make_unique<CriClient>(second);
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
  // The exit that happened while berthd was down, with its code and time.
  auto gone = wait_exited(quitter);
  EXPECT_EQ(gone.state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(gone.exit_code(), 7);
  EXPECT_EQ(gone.reason(), "Error");
  EXPECT_GE(gone.finished_at(), down_since);
  v1::ExecSyncResponse r;
  ASSERT_OK(cri_->exec_sync(id, {"touch", "/tmp/stop"}, &r, 10));
  auto st = wait_exited(id);
  EXPECT_EQ(st.exit_code(), 42);  // learned from the monitor, after the restart
  EXPECT_EQ(st.reason(), "Error");
  // Not one line lost across the kill and the restart: tick-0, tick-1, ... with no gap.
  std::istringstream log(log_of("tick"));
  int expected = 0;
  for (std::string line; std::getline(log, line);) {
    size_t at = line.find("tick-");
    ASSERT_NE(at, std::string::npos) << line;
    EXPECT_EQ(line.substr(at), "tick-" + std::to_string(expected)) << "a line was lost or garbled";
    ++expected;
  }
  EXPECT_GT(expected, 8);
  ASSERT_OK(cri_->remove_pod(pod_));
  EXPECT_TRUE(cri_->list_containers().empty());
}

TEST_F(Containers, ThirtyContainersAndEveryFilter) {
  auto& cri = ready();
  std::string other_pod;
  auto other = test_pod("other");
  other.set_log_directory(logs_->path() + "/other");
  ASSERT_OK(cri.run_pod(other, &other_pod));
  std::vector<std::string> ids;
  for (int i = 0; i < 30; ++i) {
    auto c = test_container("c" + std::to_string(i), image(), {"sleep", "1000"});
    (*c.mutable_labels())["parity"] = i % 2 ? "odd" : "even";
    std::string id;
    ASSERT_OK(cri.create_container(i < 20 ? pod_ : other_pod, c, &id));
    if (i % 3 == 0) {
      ASSERT_OK(cri.start_container(id));
    }
    ids.push_back(id);
  }
  EXPECT_EQ(cri.list_containers().size(), 30u);
  v1::ContainerFilter f;
  f.set_id(ids[7].substr(0, 12));
  ASSERT_EQ(cri.list_containers(f).size(), 1u);
  EXPECT_EQ(cri.list_containers(f)[0].id(), ids[7]);
  f.Clear();
  f.mutable_state()->set_state(v1::CONTAINER_RUNNING);
  EXPECT_EQ(cri.list_containers(f).size(), 10u);
  f.Clear();
  f.set_pod_sandbox_id(other_pod.substr(0, 10));
  EXPECT_EQ(cri.list_containers(f).size(), 10u);
  f.Clear();
  (*f.mutable_label_selector())["parity"] = "odd";
  EXPECT_EQ(cri.list_containers(f).size(), 15u);
  (*f.mutable_label_selector())["container"] = "c7";
  EXPECT_EQ(cri.list_containers(f).size(), 1u);
  // Name reservation: the same name and attempt in the same pod.
  std::string dup;
  grpc::Status s = cri.create_container(pod_, test_container("c3", image(), {"true"}), &dup);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_NE(s.error_message().find("is reserved for container " + ids[3]), std::string::npos) << s.error_message();
  // StopPodSandbox stops its containers; RemovePodSandbox removes them.
  ASSERT_OK(cri.stop_pod(other_pod));
  f.Clear();
  f.set_pod_sandbox_id(other_pod);
  for (const auto& c : cri.list_containers(f)) EXPECT_NE(c.state(), v1::CONTAINER_RUNNING);
  ASSERT_OK(cri.remove_pod(other_pod));
  EXPECT_EQ(cri.list_containers().size(), 20u);
  ASSERT_OK(cri.remove_pod(pod_));
  EXPECT_TRUE(cri.list_containers().empty());
}

TEST_F(Containers, BadRequestsAreRefusedAndLeaveNothing) {
  auto& cri = ready();
  std::string id;
  struct Case {
    std::string pod;
    v1::ContainerConfig config;
    grpc::StatusCode code;
    std::string says;
  };
  auto base = [&] { return test_container("bad", image(), {"true"}); };
  std::vector<Case> cases;
  cases.push_back({"nope", base(), grpc::StatusCode::NOT_FOUND, "pod sandbox nope not found"});
  auto noname = base();
  noname.mutable_metadata()->set_name("");
  cases.push_back({pod_, noname, grpc::StatusCode::INVALID_ARGUMENT, "config.metadata.name"});
  auto noimage = base();
  noimage.mutable_image()->set_image("registry.invalid/none:1");
  cases.push_back({pod_, noimage, grpc::StatusCode::NOT_FOUND, "registry.invalid/none:1"});
  auto badcap = base();
  badcap.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities("CAP_FLY");
  cases.push_back({pod_, badcap, grpc::StatusCode::INVALID_ARGUMENT, "CAP_FLY"});
  auto baduser = base();
  baduser.mutable_linux()->mutable_security_context()->set_run_as_username("nobody-here");
  cases.push_back({pod_, baduser, grpc::StatusCode::INVALID_ARGUMENT, "nobody-here"});
  auto badmount = base();
  badmount.add_mounts()->set_container_path("/x");
  badmount.mutable_mounts(0)->set_host_path("/no/such/host/path");
  cases.push_back({pod_, badmount, grpc::StatusCode::INVALID_ARGUMENT, "/no/such/host/path"});
  auto priv = base();
  priv.mutable_linux()->mutable_security_context()->set_privileged(true);
  cases.push_back({pod_, priv, grpc::StatusCode::INVALID_ARGUMENT, "is not privileged"});
  auto badlog = base();
  badlog.set_log_path("/abs/path.log");
  cases.push_back({pod_, badlog, grpc::StatusCode::INVALID_ARGUMENT, "config.log_path"});
  for (const auto& c : cases) {
    grpc::Status s = cri.create_container(c.pod, c.config, &id);
    EXPECT_EQ(s.error_code(), c.code) << c.says << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.says), std::string::npos) << s.error_message();
  }
  EXPECT_TRUE(cri.list_containers().empty());
  EXPECT_TRUE(fs::is_empty(d_->state() + "/containers"));
  EXPECT_TRUE(fs::is_empty(d_->root() + "/containers"));
  EXPECT_EQ(shell("grep -c " + d_->state() + "/containers /proc/self/mountinfo"), "0\n");
  // A sandbox that is not ready takes no containers.
  ASSERT_OK(cri.stop_pod(pod_));
  grpc::Status s = cri.create_container(pod_, base(), &id);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
}

}  // namespace
}  // namespace berth::test
