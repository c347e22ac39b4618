// berth as a node runs it: the packaged berthd started by systemd (pid 1) on a cgroup v2 host,
// configured for the systemd cgroup driver with crun as a second handler, driven as kubelet drives
// it. Run by tests/vm/node-tests inside the node guest (tests/vm/cgroup2-vm --systemd), after it
// installed the package; it talks to /run/berth/berth.sock ($BERTH_NODE_SOCKET) and to systemd
// (systemctl, busctl, journalctl). Each pod's parent is a slice made as kubelet makes it
// (kubepods-burstable-pod<uid>.slice, a transient unit), every container and pause a scope; the
// tests that take a handler run with runc (the default) and crun.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"
#include "berth/test/streaming_client.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string socket_path() {
  const char* s = std::getenv("BERTH_NODE_SOCKET");
  return s && *s ? s : "/run/berth/berth.sock";
}

std::shared_ptr<grpc::Channel> node_channel() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  return grpc::CreateCustomChannel("unix:" + socket_path(), grpc::InsecureChannelCredentials(), args);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string unit_property(const std::string& unit, const std::string& property) {
  return trimmed(shell("systemctl show -p " + property + " --value '" + unit + "' 2>&1"));
}

// Units of berth's making, or of a test's, still known to systemd (loaded, whatever their state).
std::set<std::string> units_named(const std::string& pattern) {
  std::istringstream in(shell("systemctl list-units --all --plain --no-legend '" + pattern + "' | awk '{print $1}'"));
  std::set<std::string> out;
  for (std::string u; std::getline(in, u);)
    if (!u.empty()) out.insert(u);
  return out;
}

template <class F>
bool eventually(F cond, std::chrono::milliseconds limit = 60s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// The process's cgroup v2 path ("/kubepods.slice/...").
std::string cgroup_of(int pid) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/cgroup");
  size_t at = text.find("0::");
  return at == std::string::npos ? "" : trimmed(text.substr(at + 3));
}

bool serving() {
  CriClient cri(node_channel());
  v1::StatusResponse r;
  return cri.status(&r).ok();
}

int main_pid() { return std::atoi(unit_property("berthd.service", "MainPID").c_str()); }

#define EXPECT_OK(call)                                   \
  do {                                                    \
    grpc::Status status_ = (call);                        \
    EXPECT_TRUE(status_.ok()) << status_.error_message(); \
  } while (0)

// A pod's slice made as kubelet's systemd driver makes it: a transient slice unit (its parents,
// kubepods.slice and kubepods-burstable.slice, come with it), stopped again when the test is done.
class KubeletSlice {
 public:
  explicit KubeletSlice(const std::string& uid) : name_("kubepods-burstable-pod" + uid + ".slice") {
    std::string out = shell(
        "busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 "
        "org.freedesktop.systemd1.Manager StartTransientUnit 'ssa(sv)a(sa(sv))' " +
        name_ + " replace 2 Description s 'kubelet pod " + uid + "' MemoryAccounting b true 0 2>&1");
    EXPECT_NE(out.find("/org/freedesktop/systemd1/job/"), std::string::npos) << out;
    EXPECT_TRUE(eventually([&] { return unit_property(name_, "ActiveState") == "active"; })) << name_;
  }
  ~KubeletSlice() { shell("systemctl stop '" + name_ + "' 2>&1"); }
  const std::string& name() const { return name_; }
  std::string dir() const { return "/kubepods.slice/kubepods-burstable.slice/" + name_; }

 private:
  std::string name_;
};

class NodeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    push_test_images(registry_->url(), {"--only", "busybox"});
    push_test_images(registry_->url());
  }
  static void TearDownTestSuite() {
    delete registry_;
    registry_ = nullptr;
    shell("systemctl stop kubepods.slice 2>&1");
  }
  void SetUp() override {
    ASSERT_TRUE(eventually(serving)) << "berthd does not answer on " << socket_path();
    ASSERT_OK(cri_.pull_image(image()));
  }
  // Everything a test made is removed, and then no unit of berth's is left.
  void TearDown() override {
    for (const auto& c : cri_.list_containers()) (void)cri_.remove_container(c.id());
    for (const auto& p : cri_.list_pods()) (void)cri_.remove_pod(p.id());
    std::set<std::string> left;
    EXPECT_TRUE(eventually([&] { return (left = units_named("berth-*.scope")).empty(); }, 20s))
        << "units left: " << ::testing::PrintToString(left);
    std::error_code ec;
    fs::remove_all(logs_, ec);
  }
  static std::string image() { return registry_->host() + "/test/busybox:latest"; }
  static std::string layered() { return registry_->host() + "/test/layered:v1"; }

  v1::PodSandboxConfig pod(const std::string& name, const std::string& parent) {
    v1::PodSandboxConfig c = test_pod(name);
    c.mutable_linux()->set_cgroup_parent(parent);
    c.set_log_directory(logs_ + "/" + name);
    return c;
  }
  std::string run_pod(const v1::PodSandboxConfig& config, const std::string& handler) {
    std::string id;
    grpc::Status s = cri_.run_pod(config, &id, handler);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return id;
  }
  std::string run_container(const std::string& pod_id, const v1::PodSandboxConfig& pod_config,
                            const v1::ContainerConfig& c) {
    std::string id;
    grpc::Status s = cri_.create_container(pod_id, c, &id, pod_config);
    EXPECT_TRUE(s.ok()) << s.error_message();
    s = cri_.start_container(id);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return id;
  }
  int pause_pid(const std::string& pod_id) {
    v1::PodSandboxStatusResponse r;
    EXPECT_OK(cri_.pod_status(pod_id, &r, true));
    return pid_in(r.info());
  }
  int container_pid(const std::string& id) {
    v1::ContainerStatusResponse r;
    EXPECT_OK(cri_.container_status(id, &r, true));
    return pid_in(r.info());
  }
  // -1 when the status had no verbose info (a failed call): never 0, which kill() reads as "my group".
  static int pid_in(const google::protobuf::Map<std::string, std::string>& info) {
    auto it = info.find("info");
    int pid = it == info.end() ? 0 : nlohmann::json::parse(it->second).value("pid", 0);
    return pid > 0 ? pid : -1;
  }
  std::string exec(const std::string& id, const std::vector<std::string>& cmd) {
    v1::ExecSyncResponse r;
    grpc::Status s = cri_.exec_sync(id, cmd, &r, 60);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(r.exit_code(), 0) << r.stderr();
    return r.stdout();
  }

  static inline RegistryProcess* registry_ = nullptr;
  CriClient cri_{node_channel()};
  std::string logs_ = "/tmp/berth-node-logs-" + std::to_string(::getpid());
};

// "" is the default handler (runc), "crun" the second one the node's drop-in configures.
class NodeHandlers : public NodeTest, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string handler() const { return GetParam(); }
  std::string uid() const { return std::string(GetParam().empty() ? "runc" : GetParam()) + std::to_string(::getpid()); }
};

INSTANTIATE_TEST_SUITE_P(Handlers, NodeHandlers, ::testing::Values("", "crun"),
                         [](const auto& info) { return info.param.empty() ? std::string("runc") : info.param; });

// The pause and each container in a scope of their own, made through systemd, below kubelet's
// slice; a container's scope delegated (its runtime manages what is below it); exec, logs and
// stats with PSI; every scope gone with what it held.
TEST_P(NodeHandlers, APodLivesInKubeletsSliceAndItsScopes) {
  KubeletSlice slice(uid());
  auto config = pod("life-" + uid(), slice.name());
  std::string pod_id = run_pod(config, handler());
  ASSERT_FALSE(pod_id.empty());
  const std::string pause_scope = "berth-" + pod_id + ".scope";
  EXPECT_EQ(cgroup_of(pause_pid(pod_id)), slice.dir() + "/" + pause_scope);
  EXPECT_EQ(unit_property(pause_scope, "ActiveState"), "active");
  EXPECT_EQ(unit_property(pause_scope, "Slice"), slice.name());
  EXPECT_EQ(unit_property(pause_scope, "Delegate"), "yes");

  auto c = test_container("counter", image(),
                          {"/bin/sh", "-c", "i=0; while :; do echo line-$i; i=$((i+1)); sleep 0.2; done"});
  std::string id = run_container(pod_id, config, c);
  const std::string scope = "berth-" + id + ".scope";
  int pid = container_pid(id);
  // crun puts the container's processes in a "container" cgroup below its scope on cgroup v2.
  EXPECT_EQ(cgroup_of(pid).rfind(slice.dir() + "/" + scope, 0), 0u) << cgroup_of(pid);
  EXPECT_EQ(unit_property(scope, "ActiveState"), "active");
  EXPECT_EQ(exec(id, {"echo", "from-exec"}), "from-exec\n");
  // ExecSync's command runs in the container's cgroup.
  EXPECT_EQ(exec(id, {"cat", "/proc/self/cgroup"}).substr(0, 3), "0::");
  const std::string log = config.log_directory() + "/counter.log";
  EXPECT_TRUE(eventually([&] { return read_file(log).find(" stdout F line-3\n") != std::string::npos; }))
      << read_file(log);

  v1::ContainerStatsResponse stats;
  {
    grpc::ClientContext ctx;
    v1::ContainerStatsRequest req;
    req.set_container_id(id);
    ASSERT_TRUE(cri_.runtime().ContainerStats(&ctx, req, &stats).ok());
  }
  EXPECT_GT(stats.stats().memory().working_set_bytes().value(), 0u);
  EXPECT_TRUE(stats.stats().cpu().has_psi());
  EXPECT_TRUE(stats.stats().memory().has_psi());
  v1::PodSandboxStatsResponse pod_stats;
  {
    grpc::ClientContext ctx;
    v1::PodSandboxStatsRequest req;
    req.set_pod_sandbox_id(pod_id);
    ASSERT_TRUE(cri_.runtime().PodSandboxStats(&ctx, req, &pod_stats).ok());
  }
  EXPECT_GT(pod_stats.stats().linux().memory().working_set_bytes().value(), 0u);
  EXPECT_GT(pod_stats.stats().linux().process().process_count().value(), 0u);

  ASSERT_OK(cri_.stop_container(id, 5));
  ASSERT_OK(cri_.remove_container(id));
  EXPECT_TRUE(eventually([&] { return units_named(scope).empty(); })) << scope;
  ASSERT_OK(cri_.stop_pod(pod_id));
  ASSERT_OK(cri_.remove_pod(pod_id));
  EXPECT_TRUE(eventually([&] { return units_named(pause_scope).empty(); })) << pause_scope;
  EXPECT_EQ(unit_property(slice.name(), "ActiveState"), "active");  // kubelet's, left to kubelet
}

TEST_P(NodeHandlers, ExecAttachAndPortForward) {
  KubeletSlice slice(uid());
  auto config = pod("stream-" + uid(), slice.name());
  std::string pod_id = run_pod(config, handler());
  auto echo = test_container("echo", image(), {"nc", "-ll", "-p", "8080", "-e", "/bin/cat"});
  std::string echo_id = run_container(pod_id, config, echo);
  auto talker = test_container("talker", image(), {"/bin/sh", "-c", "while read l; do echo got-$l; done"});
  talker.set_stdin(true);
  std::string talker_id = run_container(pod_id, config, talker);

  grpc::ClientContext exec_ctx;
  v1::ExecRequest exec_req;
  exec_req.set_container_id(echo_id);
  for (const char* a : {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}) exec_req.add_cmd(a);
  exec_req.set_stdout(true);
  exec_req.set_stderr(true);
  v1::ExecResponse exec_resp;
  ASSERT_TRUE(cri_.runtime().Exec(&exec_ctx, exec_req, &exec_resp).ok());
  auto r = run_command(exec_resp.url(), {.transport = Transport::spdy});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code.value_or(-1), 3);

  grpc::ClientContext attach_ctx;
  v1::AttachRequest attach_req;
  attach_req.set_container_id(talker_id);
  attach_req.set_stdin(true);
  attach_req.set_stdout(true);
  attach_req.set_stderr(true);
  v1::AttachResponse attach_resp;
  ASSERT_TRUE(cri_.runtime().Attach(&attach_ctx, attach_req, &attach_resp).ok());
  auto a = RemoteCommandClient::connect(
      attach_resp.url(), {.transport = Transport::websocket, .protocols = {"v5.channel.k8s.io"}, .stdin = true});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE((*a)->send_stdin("hello\n").ok());
  EXPECT_TRUE((*a)->wait_stdout("got-hello", 30s));
  (*a)->abort();

  grpc::ClientContext pf_ctx;
  v1::PortForwardRequest pf_req;
  pf_req.set_pod_sandbox_id(pod_id);
  pf_req.add_port(8080);
  v1::PortForwardResponse pf_resp;
  ASSERT_TRUE(cri_.runtime().PortForward(&pf_ctx, pf_req, &pf_resp).ok());
  auto pf =
      PortForwardClient::connect(pf_resp.url(), {.transport = Transport::spdy, .protocols = {"portforward.k8s.io"}});
  ASSERT_TRUE(pf.ok()) << pf.status().message();
  auto stream = (*pf)->open(8080);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_TRUE((*stream)->write("through the pod\n").ok());
  auto back = (*stream)->read_exact(16, 30s);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, "through the pod\n");
}

// A slice kubelet made is kubelet's to resize: berth records the pod's resources and writes
// nothing there. A parent slice no one made before the pod is berth's: systemd made it for the
// pause's scope, berth gives it the limits as unit properties, and stops it with its last pod.
TEST_P(NodeHandlers, PodResizeWritesOnlyTheSliceBerthCausedToExist) {
  KubeletSlice slice(uid());
  auto config = pod("resize-" + uid(), slice.name());
  std::string pod_id = run_pod(config, handler());
  const std::string kubelet_max = read_file("/sys/fs/cgroup" + slice.dir() + "/memory.max");
  v1::LinuxContainerResources res;
  res.set_memory_limit_in_bytes(256 << 20);
  auto resize = [&](const std::string& id) {
    grpc::ClientContext ctx;
    v1::UpdatePodSandboxResourcesRequest req;
    req.set_pod_sandbox_id(id);
    *req.mutable_resources() = res;
    v1::UpdatePodSandboxResourcesResponse resp;
    return cri_.runtime().UpdatePodSandboxResources(&ctx, req, &resp);
  };
  ASSERT_OK(resize(pod_id));
  EXPECT_EQ(read_file("/sys/fs/cgroup" + slice.dir() + "/memory.max"), kubelet_max);
  v1::PodSandboxStatusResponse st;
  ASSERT_OK(cri_.pod_status(pod_id, &st, true));
  EXPECT_EQ(nlohmann::json::parse(st.info().at("info"))["resources"].value("memory_limit_in_bytes", 0), 256 << 20);

  const std::string own = "berthtest-own" + uid() + ".slice";
  ASSERT_TRUE(units_named(own).empty());
  auto own_config = pod("own-" + uid(), own);
  std::string own_id = run_pod(own_config, handler());
  ASSERT_EQ(unit_property(own, "ActiveState"), "active");
  ASSERT_OK(resize(own_id));
  EXPECT_EQ(unit_property(own, "MemoryMax"), std::to_string(256 << 20));
  EXPECT_EQ(read_file("/sys/fs/cgroup/berthtest.slice/" + own + "/memory.max"), std::to_string(256 << 20) + "\n");
  ASSERT_OK(cri_.stop_pod(own_id));
  ASSERT_OK(cri_.remove_pod(own_id));
  EXPECT_TRUE(eventually([&] { return units_named(own).empty() && units_named("berthtest.slice").empty(); }))
      << own << " or berthtest.slice outlived its last pod";
}

TEST_P(NodeHandlers, AUserNamespacedPodAndAnImageVolume) {
  v1::StatusResponse status;
  ASSERT_OK(cri_.status(&status));
  bool userns = false;
  for (const auto& h : status.runtime_handlers())
    if (h.name() == handler()) userns = h.features().user_namespaces();
  ASSERT_TRUE(userns) << "handler '" << handler() << "' does not advertise user namespaces on this node";

  KubeletSlice slice(uid());
  auto config = pod("userns-" + uid(), slice.name());
  auto* u = config.mutable_linux()->mutable_security_context()->mutable_namespace_options()->mutable_userns_options();
  u->set_mode(v1::POD);
  for (auto* ids : {u->mutable_uids(), u->mutable_gids()}) {
    auto* m = ids->Add();
    m->set_container_id(0);
    m->set_host_id(65536u * (GetParam().empty() ? 400 : 401));
    m->set_length(65536);
  }
  std::string pod_id = run_pod(config, handler());
  ASSERT_FALSE(pod_id.empty());
  ASSERT_OK(cri_.pull_image(layered()));
  auto c = test_container("inside", image(), {"sleep", "1000"});
  auto* m = c.add_mounts();
  m->set_container_path("/vol");
  m->mutable_image()->set_image(layered());
  std::string id = run_container(pod_id, config, c);
  ASSERT_FALSE(id.empty());
  std::string map = exec(id, {"cat", "/proc/self/uid_map"});
  EXPECT_NE(map.find(std::to_string(65536u * (GetParam().empty() ? 400 : 401))), std::string::npos) << map;
  EXPECT_EQ(exec(id, {"id", "-u"}), "0\n");
  EXPECT_FALSE(exec(id, {"ls", "/vol"}).empty());
  EXPECT_EQ(cgroup_of(container_pid(id)).rfind(slice.dir() + "/berth-" + id + ".scope", 0), 0u);
}

// systemctl restart, a kill -9 that Restart=always answers, and systemctl reload, with pods of both
// handlers running: the pods and their containers go on (same processes), their logs keep growing,
// and the restarted berthd finds all of them.
TEST_F(NodeTest, PodsSurviveRestartKillAndReload) {
  KubeletSlice slice("survive" + std::to_string(::getpid()));
  struct Pod {
    v1::PodSandboxConfig config;
    std::string id, container;
    int pause = 0, pid = 0;
  };
  std::vector<Pod> pods;
  for (const std::string handler : {"", "crun"}) {
    Pod p;
    p.config = pod("survive-" + std::string(handler.empty() ? "runc" : handler), slice.name());
    p.id = run_pod(p.config, handler);
    ASSERT_FALSE(p.id.empty());
    p.container =
        run_container(p.id, p.config,
                      test_container("ticker", image(),
                                     {"/bin/sh", "-c", "i=0; while :; do echo tick-$i; i=$((i+1)); sleep 0.1; done"}));
    p.pause = pause_pid(p.id);
    p.pid = container_pid(p.container);
    ASSERT_GT(p.pause, 0);
    ASSERT_GT(p.pid, 0);
    pods.push_back(p);
  }
  auto log_of = [](const Pod& p) { return read_file(p.config.log_directory() + "/ticker.log"); };
  auto still_there = [&](const std::string& after) {
    SCOPED_TRACE(after);
    ASSERT_TRUE(eventually(serving)) << "berthd does not serve after " << after;
    EXPECT_EQ(cri_.list_pods().size(), pods.size());
    for (const Pod& p : pods) {
      v1::PodSandboxStatusResponse ps;
      ASSERT_OK(cri_.pod_status(p.id, &ps, true));
      EXPECT_EQ(ps.status().state(), v1::SANDBOX_READY);
      EXPECT_EQ(pause_pid(p.id), p.pause);
      v1::ContainerStatusResponse cs;
      ASSERT_OK(cri_.container_status(p.container, &cs));
      EXPECT_EQ(cs.status().state(), v1::CONTAINER_RUNNING);
      EXPECT_EQ(container_pid(p.container), p.pid);
      size_t before = log_of(p).size();
      EXPECT_TRUE(eventually([&] { return log_of(p).size() > before + 100; })) << "the log stopped growing";
      EXPECT_EQ(exec(p.container, {"echo", "ok"}), "ok\n");
    }
  };
  int first = main_pid();
  ASSERT_EQ(shell("systemctl restart berthd 2>&1; echo $?"), "0\n");
  EXPECT_NE(main_pid(), first);
  still_there("systemctl restart");

  int second = main_pid();
  ASSERT_GT(second, 0);
  ASSERT_EQ(::kill(second, SIGKILL), 0);
  EXPECT_TRUE(eventually([&] { return main_pid() != second && main_pid() > 0; }))
      << "Restart=always did not bring it back";
  still_there("kill -9");

  int third = main_pid();
  ASSERT_EQ(shell("systemctl reload berthd 2>&1; echo $?"), "0\n");
  EXPECT_EQ(main_pid(), third);
  EXPECT_EQ(unit_property("berthd.service", "ActiveState"), "active");
  still_there("systemctl reload");
  // Every line a ticker wrote is in its log once, in order: nothing lost or doubled over the three.
  for (const Pod& p : pods) {
    std::istringstream in(log_of(p));
    int expect = 0;
    for (std::string line; std::getline(in, line);) {
      std::string want = " stdout F tick-" + std::to_string(expect);
      ASSERT_NE(line.find(want), std::string::npos) << "after tick-" << expect - 1 << ": " << line;
      ++expect;
    }
  }
}

// berthd's log lines reach the journal with their levels (journald reads the "<N>" priority).
TEST_F(NodeTest, TheJournalHasBerthdsLevels) {
  const std::string since = trimmed(shell("date '+%Y-%m-%d %H:%M:%S'"));
  // A reload with a drop-in that does not parse: an error, and nothing changes.
  write_file("/etc/berth/berth.toml.d/99-broken.toml", "log_level = 7\n");
  shell("systemctl reload berthd");
  ASSERT_TRUE(eventually(serving));
  fs::remove("/etc/berth/berth.toml.d/99-broken.toml");
  shell("systemctl reload berthd");
  std::string errors, infos;
  ASSERT_TRUE(eventually(
      [&] {
        errors = shell("journalctl -u berthd --since '" + since + "' -p err..err -o cat");
        infos = shell("journalctl -u berthd --since '" + since + "' -p info..info -o cat");
        return errors.find("99-broken.toml") != std::string::npos && !infos.empty();
      },
      30s))
      << "errors:\n"
      << errors << "\ninfo:\n"
      << infos;
  // The priority prefix is taken off the line, not left in the text.
  EXPECT_EQ(errors.find("<3>"), std::string::npos) << errors;
  EXPECT_EQ(infos.find("<6>"), std::string::npos) << infos;
  EXPECT_EQ(shell("journalctl -u berthd --since '" + since + "' -p debug..debug -o cat | head -1"),
            "");  // log_level info
}

// Status lists crun as a handler of its own, with what crun can do here.
TEST_F(NodeTest, StatusAdvertisesCrunWithItsOwnFeatures) {
  v1::StatusResponse status;
  ASSERT_OK(cri_.status(&status, true));
  std::map<std::string, v1::RuntimeHandlerFeatures> handlers;
  for (const auto& h : status.runtime_handlers()) handlers[h.name()] = h.features();
  ASSERT_EQ(handlers.count("crun"), 1u);
  ASSERT_EQ(handlers.count("runc"), 1u);
  EXPECT_TRUE(handlers["crun"].recursive_read_only_mounts());
  EXPECT_TRUE(handlers["crun"].user_namespaces());
  nlohmann::json config = nlohmann::json::parse(status.info().at("config"));
  EXPECT_EQ(config.value("cgroup_driver", ""), "systemd");
  v1::RuntimeConfigResponse rc;
  grpc::ClientContext ctx;
  ASSERT_TRUE(cri_.runtime().RuntimeConfig(&ctx, v1::RuntimeConfigRequest(), &rc).ok());
  EXPECT_EQ(rc.linux().cgroup_driver(), v1::CgroupDriver::SYSTEMD);
}

// Two halves of a check tests/vm/node-tests makes around `apt-get remove berth` and the reinstall
// (BERTH_NODE_PHASE names the half; skipped in the CRI run itself): a pod started before the
// removal runs on without berthd, and the berthd of the reinstalled package finds it and removes it.
// The pod, its container's pid and its slice pass from one half to the other in $BERTH_NODE_STATE.
class NodePackage : public NodeTest {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("BERTH_NODE_PHASE")) NodeTest::SetUpTestSuite();
  }
  // The registry goes; kubepods.slice stays, with the pod that is to outlive berthd in it.
  static void TearDownTestSuite() {
    delete registry_;
    registry_ = nullptr;
  }
  void SetUp() override {
    const char* phase = std::getenv("BERTH_NODE_PHASE");
    if (!phase || std::string(phase) != phase_) GTEST_SKIP() << "run by tests/vm/node-tests (BERTH_NODE_PHASE)";
    NodeTest::SetUp();
  }
  void TearDown() override {}  // the pod outlives the first half on purpose; the second removes it
  std::string state_file() const {
    const char* f = std::getenv("BERTH_NODE_STATE");
    return f ? f : "/tmp/berth-node-state";
  }
  std::string phase_;
};

class NodePackageBeforeRemoval : public NodePackage {
 protected:
  NodePackageBeforeRemoval() { phase_ = "before-removal"; }
};
class NodePackageAfterReinstall : public NodePackage {
 protected:
  NodePackageAfterReinstall() { phase_ = "after-reinstall"; }
};

TEST_F(NodePackageBeforeRemoval, APodIsRunning) {
  const std::string uid = "package" + std::to_string(::getpid());
  // Made as kubelet makes it, and left for the second half.
  shell(
      "busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager "
      "StartTransientUnit 'ssa(sv)a(sa(sv))' kubepods-burstable-pod" +
      uid + ".slice replace 0 0");
  auto config = pod("package", "kubepods-burstable-pod" + uid + ".slice");
  config.set_log_directory("/tmp/berth-node-package-logs");
  std::string pod_id = run_pod(config, "");
  std::string id = run_container(pod_id, config, test_container("sleeper", image(), {"sleep", "100000"}));
  int pid = container_pid(id);
  ASSERT_GT(pid, 0);
  write_file(state_file(),
             pod_id + " " + id + " " + std::to_string(pid) + " kubepods-burstable-pod" + uid + ".slice\n");
}

TEST_F(NodePackageAfterReinstall, ThePodIsFoundAndRemoved) {
  std::istringstream in(read_file(state_file()));
  std::string pod_id, id, slice;
  int pid = 0;
  ASSERT_TRUE(in >> pod_id >> id >> pid >> slice) << state_file();
  v1::PodSandboxStatusResponse ps;
  ASSERT_OK(cri_.pod_status(pod_id, &ps, true));
  EXPECT_EQ(ps.status().state(), v1::SANDBOX_READY);
  v1::ContainerStatusResponse cs;
  ASSERT_OK(cri_.container_status(id, &cs));
  EXPECT_EQ(cs.status().state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(container_pid(id), pid);
  ASSERT_OK(cri_.remove_pod(pod_id));
  EXPECT_NE(::kill(pid, 0), 0);
  std::set<std::string> left;
  EXPECT_TRUE(eventually([&] { return (left = units_named("berth-*.scope")).empty(); }, 20s))
      << ::testing::PrintToString(left);
  shell("systemctl stop " + slice + " kubepods.slice");  // as kubelet would, with its own slices
  std::error_code ec;
  fs::remove_all("/tmp/berth-node-package-logs", ec);
}

}  // namespace
}  // namespace berth::test
