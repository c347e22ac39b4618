// ExecSync through berth-exec instead of `runc exec`: the command runs as a child of the helper
// (seen from the host), and with exactly the security of the container's init as runc set it up:
// ids, groups, every capability set, no_new_privs, the seccomp mode, filter count and the
// speculation mitigation it implies, namespaces, cgroups, OOM score, rlimits, umask, cwd and env
// are compared line by line between the init's view (in the container log) and the ExecSync'd
// process's. A spec the helper does not apply (a terminal) still works through the runtime, and a
// timeout there leaves no process either.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ExecHelper : public PodFixture {};

// What a process sees of its own security and placement, one "key: value" per line.
const char* kSelfView =
    "grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_filters|"
    "Speculation_Store_Bypass):' /proc/self/status; "
    "for n in mnt net ipc uts pid cgroup user; do echo \"ns $n: $(readlink /proc/self/ns/$n)\"; done; "
    "sed 's/^/cgroup: /' /proc/self/cgroup; "
    "echo \"oom: $(cat /proc/self/oom_score_adj)\"; echo \"nofile: $(ulimit -n)\"; echo \"umask: $(umask)\"; "
    "echo \"cwd: $(pwd)\"; env | grep -E '^(PATH|PROBE_ENV)=' | sort | sed 's/^/env: /'";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

// The container's stdout lines from its CRI log, after the marker line.
std::vector<std::string> logged_after(const std::string& log, const std::string& marker) {
  std::vector<std::string> out;
  bool on = false;
  for (const auto& l : lines(log)) {
    auto at = l.find(" stdout F ");
    if (at == std::string::npos) continue;
    std::string text = l.substr(at + 10);
    if (on && text == "END") break;
    if (on) out.push_back(text);
    if (text == marker) on = true;
  }
  return out;
}

std::string proc_field(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string l; std::getline(in, l);)
    if (l.rfind(key + ":", 0) == 0) return l.substr(l.find_first_not_of(" \t", key.size() + 1));
  return "";
}

// The init's view (logged at its start) and the ExecSync'd process's, line by line.
struct Views {
  std::vector<std::string> init, exec;
  std::string text;  // exec's, for the checks that they are what was asked
};

class ExecHelperViews : public ExecHelper {
 protected:
  // berthd runs with a soft open-files limit below its hard one, as systemd starts services
  // (1024:524288): the init (which runc built with Go < 1.21 would give the hard limit) and an
  // ExecSync'd process must still see the same.
  void SetUp() override {
    ExecHelper::SetUp();
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved_nofile_), 0);
    if (saved_nofile_.rlim_max < 64) GTEST_SKIP() << "hard RLIMIT_NOFILE too low to lower the soft one";
    rlimit lowered = saved_nofile_;
    lowered.rlim_cur = std::min<rlim_t>(saved_nofile_.rlim_max / 2, 1024);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  }
  void TearDown() override {
    ExecHelper::TearDown();
    ::setrlimit(RLIMIT_NOFILE, &saved_nofile_);
  }
  rlimit saved_nofile_{};

  Views compare(v1::ContainerConfig c) {
    c.mutable_command()->Clear();
    c.mutable_args()->Clear();
    for (const char* a : {"/bin/sh", "-c"}) c.add_command(a);
    c.add_command(std::string("echo BEGIN; ") + kSelfView + "; echo END; exec sleep 1000");
    std::string id = run(c);
    const std::string name = c.metadata().name();
    Views v;
    EXPECT_TRUE(wait_for_file_text(logs_->path() + "/" + name + ".log", "stdout F END")) << log_of(name);
    v.init = logged_after(log_of(name), "BEGIN");
    v1::ExecSyncResponse r;
    grpc::Status s = cri_->exec_sync(id, {"/bin/sh", "-c", kSelfView}, &r, 10);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(r.exit_code(), 0) << r.stderr();
    v.exec = lines(r.stdout());
    for (const auto& l : v.exec) v.text += l + "\n";
    return v;
  }
};

TEST_F(ExecHelperViews, NonRootWithNoNewPrivsAndRuntimeDefault) {
  ready();
  auto c = shell_container("nonroot", "");
  auto* sc = c.mutable_linux()->mutable_security_context();
  sc->mutable_run_as_user()->set_value(1000);
  sc->mutable_run_as_group()->set_value(2000);
  sc->add_supplemental_groups(3000);
  sc->add_supplemental_groups(4000);
  sc->mutable_capabilities()->add_add_capabilities("NET_ADMIN");
  sc->mutable_capabilities()->add_drop_capabilities("CHOWN");
  sc->set_no_new_privs(true);
  sc->mutable_seccomp()->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  c.set_working_dir("/tmp");
  auto* env = c.add_envs();
  env->set_key("PROBE_ENV");
  env->set_value("a b=c");
  Views v = compare(c);
  EXPECT_EQ(v.exec, v.init);
  // The view is the one asked for, not two equal defaults.
  EXPECT_NE(v.text.find("Uid:\t1000\t1000\t1000\t1000"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("Gid:\t2000\t2000\t2000\t2000"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("3000 4000"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("NoNewPrivs:\t1"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("Seccomp:\t2"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("cwd: /tmp"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("env: PROBE_ENV=a b=c"), std::string::npos) << v.text;
}

// Root with an added capability and without no_new_privs: the filter then goes on before the
// capabilities are set (it needs CAP_SYS_ADMIN), as the runtime does.
TEST_F(ExecHelperViews, RootWithCapabilitiesAndFilterBeforeThem) {
  ready();
  auto c = shell_container("root", "");
  auto* sc = c.mutable_linux()->mutable_security_context();
  sc->mutable_capabilities()->add_add_capabilities("NET_ADMIN");
  sc->mutable_seccomp()->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  c.mutable_linux()->mutable_resources()->set_oom_score_adj(500);
  Views v = compare(c);
  EXPECT_EQ(v.exec, v.init);
  EXPECT_NE(v.text.find("Uid:\t0\t0\t0\t0"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("NoNewPrivs:\t0"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("Seccomp:\t2"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("oom: 500"), std::string::npos) << v.text;
  EXPECT_EQ(v.text.find("CapEff:\t0000000000000000"), std::string::npos) << v.text;
}

// The name of the host process that is the parent of an ExecSync'd `sleep <seconds>` in `id`
// (a duration of the test's own, so another test's sleep is never taken for it).
// A process's command line, "" when it cannot be read: the process may end while it is read
// (read() then fails with ESRCH, which an istreambuf_iterator turns into an exception).
std::string proc_cmdline(const fs::path& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::string exec_parent(CriClient& cri, const std::string& id, pid_t berthd, const std::string& seconds) {
  auto pending = std::async(std::launch::async, [&] {
    v1::ExecSyncResponse r;
    grpc::Status s = cri.exec_sync(id, {"sleep", seconds}, &r, 20);
    return s.ok() && r.exit_code() == 0;
  });
  std::string parent_name;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (parent_name.empty() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : fs::directory_iterator("/proc")) {
      std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string args = proc_cmdline(e.path() / "cmdline");
      if (args != "sleep" + std::string(1, '\0') + seconds + std::string(1, '\0')) continue;
      pid_t ppid = std::stoi(proc_field(std::stoi(name), "PPid"));
      parent_name = proc_field(ppid, "Name");
      EXPECT_EQ(proc_field(ppid, "PPid"), std::to_string(berthd));  // berthd's own child
    }
    if (parent_name.empty()) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(pending.get());
  return parent_name;
}

// default_ulimits reach the init and every ExecSync: by default nofile 1024:524288 (containerd
// 2.x's under systemd) whatever berthd's own soft limit; as configured otherwise, unlimited
// included. (A host without CAP_SYS_RESOURCE, as CI's, lowers a hard limit above berthd's own.)
TEST_F(ExecHelperViews, DefaultUlimitsReachTheInitAndEveryExec) {
  const char* limits = "grep -E '^Max (open files|processes|locked memory|core file size) ' /proc/self/limits";
  auto views_with = [&](const std::string& toml, const std::string& name) {
    ready(name, {.config_toml = toml});
    auto c = shell_container(name, "");
    c.mutable_command()->Clear();
    for (const char* a : {"/bin/sh", "-c"}) c.add_command(a);
    c.add_command(std::string("echo BEGIN; ") + limits + "; echo END; exec sleep 1000");
    std::string id = run(c);
    EXPECT_TRUE(wait_for_file_text(logs_->path() + "/" + name + ".log", "stdout F END")) << log_of(name);
    Views v;
    v.init = logged_after(log_of(name), "BEGIN");
    v1::ExecSyncResponse r;
    grpc::Status s = cri_->exec_sync(id, {"/bin/sh", "-c", limits}, &r, 10);
    EXPECT_TRUE(s.ok()) << s.error_message();
    v.exec = lines(r.stdout());
    for (const auto& l : v.exec) v.text += l + "\n";
    return v;
  };
  auto has = [](const Views& v, const std::string& resource, const std::string& soft, const std::string& hard) {
    std::regex row("^Max " + resource + " +" + soft + " +" + hard + " .*");
    return std::any_of(v.exec.begin(), v.exec.end(), [&](const std::string& l) { return std::regex_match(l, row); });
  };
  Views defaults = views_with("", "ulimits-default");
  EXPECT_EQ(defaults.exec, defaults.init);
  auto [soft, hard] = default_container_nofile();
  EXPECT_TRUE(has(defaults, "open files", std::to_string(soft), std::to_string(hard))) << defaults.text;
  Views set = views_with(
      "[default_ulimits]\nnofile = { soft = 2048, hard = 4096 }\nnproc = { soft = 500, hard = 600 }\n"
      "core = { soft = \"unlimited\", hard = \"unlimited\" }\n",
      "ulimits-set");
  EXPECT_EQ(set.exec, set.init);
  EXPECT_TRUE(has(set, "open files", "2048", "4096")) << set.text;
  EXPECT_TRUE(has(set, "processes", "500", "600")) << set.text;
  EXPECT_TRUE(has(set, "core file size", "unlimited", "unlimited")) << set.text;
}

TEST_F(ExecHelper, TheCommandIsAChildOfBerthExecNotOfTheRuntime) {
  auto& cri = ready();
  std::string id = run(shell_container("parent", "exec sleep 1000"));
  EXPECT_EQ(exec_parent(cri, id, d_->pid(), "7.25"), "berth-exec");
}

// A process field berth-exec does not know (a newer runtime-spec's I/O priority, here written
// into the bundle by hand): the runtime's exec runs the command, which still works.
TEST_F(ExecHelper, ASpecItDoesNotApplyGoesThroughTheRuntime) {
  auto& cri = ready();
  std::string id = run(shell_container("fallback", "exec sleep 1000"));
  std::string path = d_->state() + "/containers/" + id + "/config.json";
  auto spec = nlohmann::json::parse(read_file(path));
  spec["process"]["ioPriority"] = {{"class", "IOPRIO_CLASS_BE"}, {"priority", 4}};
  std::ofstream(path) << spec.dump();
  EXPECT_EQ(exec_parent(cri, id, d_->pid(), "7.5"), "runc");
  EXPECT_EQ(exec_out(id, {"echo", "through runc"}), "through runc\n");
}

// A container with a terminal (berth-exec runs none) takes ExecSync through `runc exec`: there too
// a timeout kills and reaps the command inside the container before DeadlineExceeded comes back,
// so neither the command nor its zombie stays on the host. (A sleep of a length no other test
// uses, so a concurrent run's is never counted.)
TEST_F(ExecHelper, ATimeoutThroughTheRuntimeLeavesNoProcess) {
  auto& cri = ready();
  auto c = shell_container("terminal", "exec sleep 1000");
  c.set_tty(true);
  std::string id = run(c);
  EXPECT_EQ(exec_parent(cri, id, d_->pid(), "6.75"), "runc");
  const std::vector<std::string> command{"sleep", "4323"};
  ASSERT_EQ(host_processes_running(command), std::vector<std::string>{});
  v1::ExecSyncResponse r;
  grpc::Status s = cri.exec_sync(id, command, &r, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_NE(s.error_message().find("the command was killed"), std::string::npos) << s.error_message();
  EXPECT_NE(d_->log().find("exec in container " + id + ": through the runtime: berth-exec does not apply a terminal"),
            std::string::npos)
      << d_->log();
  EXPECT_EQ(host_processes_running(command), std::vector<std::string>{});
}

// A handler whose runtime is neither runc nor crun (a sandboxing one: gVisor, Kata...; here a
// wrapper that calls itself "sandboxed-runtime" and hands its calls on to runc) gets its pause
// and every ExecSync through itself: nothing berth starts for it runs outside the runtime.
TEST_F(ExecHelper, AHandlerThatIsNotRuncOrCrunGetsItsPauseAndEveryExecThroughIt) {
  TempDir& bin = scratch();
  const std::string wrapper = bin / "sandboxed-runtime";
  const std::string calls = bin / "calls";
  write_file(wrapper,
             "#!/bin/sh\n"
             "[ \"$1\" = --version ] && { echo 'sandboxed-runtime version 1.0'; exit 0; }\n"
             "echo \"$*\" >> " +
                 calls +
                 "\n"
                 "exec runc \"$@\"\n",
             0755);
  DaemonProcess& d = daemon({.config_toml = "[runtimes.sandboxed]\npath = \"" + wrapper + "\"\n"});
  CriClient cri(d);
  ASSERT_OK(cri.pull_image(image()));
  auto config = test_pod("sandboxed");
  config.set_log_directory(logs_->path());
  std::string pod;
  ASSERT_OK(cri.run_pod(config, &pod, "sandboxed"));
  EXPECT_NE(read_file(calls).find("create --bundle " + d.state() + "/sandboxes/" + pod), std::string::npos)
      << "the pause was not created through the runtime:\n"
      << read_file(calls);
  std::string id;
  ASSERT_OK(cri.create_container(pod, shell_container("probed", "exec sleep 1000"), &id, config));
  ASSERT_OK(cri.start_container(id));
  EXPECT_EQ(exec_parent(cri, id, d.pid(), "7.125"), "runc");
  EXPECT_NE(read_file(calls).find(" exec --process "), std::string::npos) << read_file(calls);
  EXPECT_NE(
      d.log().find("exec in container " + id + ": through the runtime: handler sandboxed does not run host processes"),
      std::string::npos);
  ASSERT_OK(cri.stop_pod(pod));
  ASSERT_OK(cri.remove_pod(pod));
}

TEST_F(ExecHelper, MissingCommandIsAnErrorNamingIt) {
  auto& cri = ready();
  std::string id = run(shell_container("missing", "exec sleep 1000"));
  v1::ExecSyncResponse r;
  grpc::Status s = cri.exec_sync(id, {"no-such-tool"}, &r, 10);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("\"no-such-tool\": executable file not found in $PATH"), std::string::npos)
      << s.error_message();
  s = cri.exec_sync(id, {"/no/such/tool"}, &r, 10);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("/no/such/tool"), std::string::npos) << s.error_message();
  // A signal that ends the command gives 128+N, as from the runtime.
  ASSERT_OK(cri.exec_sync(id, {"/bin/sh", "-c", "kill -9 $$"}, &r, 10));
  EXPECT_EQ(r.exit_code(), 137);
}

}  // namespace
}  // namespace berth::test
