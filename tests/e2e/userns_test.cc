// Pods with user namespaces of their own (hostUsers: false), with real runc and the real kernel:
// root in the container is an unprivileged id on the node, image files show as container root's
// through id-mapped layers, what the container writes is stored under its host ids, ExecSync
// runs in the pod's user namespace, and removal leaves no pin or id-mapped mount. Bad mappings are
// refused, naming the field, and leave nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "berth/test/host_leftovers.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

// The host ids each test's pods use: high and apart from other tests' (kubelet uses multiples of 65536).
constexpr uint32_t kHostBase = 65536u * 300;

void set_userns(v1::NamespaceOption* ns, uint32_t host_base, uint32_t length = 65536) {
  auto* u = ns->mutable_userns_options();
  u->set_mode(v1::POD);
  for (auto* ids : {u->mutable_uids(), u->mutable_gids()}) {
    auto* m = ids->Add();
    m->set_container_id(0);
    m->set_host_id(host_base);
    m->set_length(length);
  }
}

std::string proc_status_line(int pid, const std::string& key) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/status");
  size_t at = text.find("\n" + key + ":");
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

class UserNamespaces : public PodFixture {
 protected:
  // A pod with its own user namespace mapping container ids 0-65535 to host_base and on.
  void userns_pod(uint32_t host_base) {
    ready("host-users-pod");
    // The test's temp dir stands where /run would: the pod's root must be let through it.
    ASSERT_EQ(::chmod(fs::path(d_->state()).parent_path().c_str(), 0711), 0);
    pod_config_ = test_pod("userns-pod");
    pod_config_.set_log_directory(logs_->path());
    set_userns(pod_config_.mutable_linux()->mutable_security_context()->mutable_namespace_options(), host_base);
    grpc::Status s = cri_->run_pod(pod_config_, &pod_);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  v1::ContainerConfig userns_container(const std::string& name, const std::string& script, uint32_t host_base) {
    v1::ContainerConfig c = shell_container(name, script);
    set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options(), host_base);
    return c;
  }
  LeftoverScope scope() const { return {d_->root(), d_->state(), "", nullptr, false}; }
};

TEST_F(UserNamespaces, RootInThePodIsTheMappedIdOnTheNode) {
  userns_pod(kHostBase);
  v1::StatusResponse st;
  ASSERT_OK(cri_->status(&st));
  ASSERT_GT(st.runtime_handlers_size(), 0);
  EXPECT_TRUE(st.runtime_handlers(0).features().user_namespaces()) << "this kernel has id-mapped overlay layers";

  std::string id = run(userns_container("c", "id -u; id -g; cat /proc/self/uid_map; stat -c 'busybox %u:%g' /bin/busybox; "
                                            "stat -c 'resolv %u:%g' /etc/resolv.conf; stat -c 'root %u:%g' /; "
                                            "echo hi > /written && echo written; touch /dev/shm/x && echo shm; echo done; sleep 1000",
                                         kHostBase));
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/c.log", "done")) << log_of("c");
  std::string log = log_of("c");
  EXPECT_NE(log.find("stdout F 0\n"), std::string::npos) << log;  // id -u and id -g
  EXPECT_NE(log.find(" 0   " + std::to_string(kHostBase) + "      65536"), std::string::npos) << log;  // %10u columns
  EXPECT_NE(log.find("busybox 0:0"), std::string::npos) << "image files belong to container root: " << log;
  EXPECT_NE(log.find("resolv 0:0"), std::string::npos) << log;
  EXPECT_NE(log.find("root 0:0"), std::string::npos) << log;
  EXPECT_NE(log.find("written"), std::string::npos) << log;
  EXPECT_NE(log.find("shm"), std::string::npos) << log;

  // On the node it is the mapped id, and what it wrote is stored under that id.
  v1::ContainerStatusResponse cs;
  ASSERT_OK(cri_->container_status(id, &cs, true));
  int pid = nlohmann::json::parse(cs.info().at("info"))["pid"].get<int>();
  std::string h = std::to_string(kHostBase);
  EXPECT_EQ(proc_status_line(pid, "Uid"), "Uid:\t" + h + "\t" + h + "\t" + h + "\t" + h);
  struct stat sb {};
  ASSERT_EQ(::stat((d_->root() + "/containers/" + id + "/upper/written").c_str(), &sb), 0);
  EXPECT_EQ(sb.st_uid, kHostBase);
  EXPECT_EQ(sb.st_gid, kHostBase);
  // No id-mapped layer stays mounted on the node: the overlay holds them.
  EXPECT_FALSE(fs::exists(d_->state() + "/containers/" + id + "/idmap"));

  // ExecSync runs in the pod's user namespace too.
  EXPECT_EQ(exec_out(id, {"id", "-u"}), "0\n");
  EXPECT_NE(exec_out(id, {"cat", "/proc/self/uid_map"}).find(h), std::string::npos);

  v1::PodSandboxStatusResponse ps;
  ASSERT_OK(cri_->pod_status(pod_, &ps, true));
  const auto& u = ps.status().linux().namespaces().options().userns_options();
  EXPECT_EQ(u.mode(), v1::POD);
  ASSERT_EQ(u.uids_size(), 1);
  EXPECT_EQ(u.uids(0).host_id(), kHostBase);
  auto info = nlohmann::json::parse(ps.info().at("info"));
  EXPECT_EQ(info["userns"]["uid_map"], "0 " + h + " 65536\n") << info.dump();
  std::string pin = info["userns"]["path"];
  EXPECT_TRUE(fs::exists(pin));

  ASSERT_OK(cri_->stop_container(id, 0));
  ASSERT_OK(cri_->remove_container(id));
  ASSERT_OK(cri_->remove_pod(pod_));
  EXPECT_FALSE(fs::exists(pin));
  EXPECT_EQ(read_file("/proc/self/mountinfo").find(d_->state() + "/userns"), std::string::npos);
  auto left = host_leftovers(scope());
  // The first (host users) pod is still there; only this pod's things count.
  for (const std::string& l : left) EXPECT_EQ(l.find(id), std::string::npos) << l;
}

TEST_F(UserNamespaces, BadMappingsAreRefusedNamingTheFieldAndLeaveNothing) {
  ready("host-users-pod");
  auto try_pod = [&](const std::function<void(v1::NamespaceOption*)>& edit) {
    v1::PodSandboxConfig c = test_pod("bad");
    set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options(), kHostBase);
    edit(c.mutable_linux()->mutable_security_context()->mutable_namespace_options());
    std::string id;
    return cri_->run_pod(c, &id);
  };
  struct Case {
    std::function<void(v1::NamespaceOption*)> edit;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {[](v1::NamespaceOption* ns) { ns->mutable_userns_options()->mutable_uids(0)->set_host_id(0); },
            "namespace_options.userns_options.uids[0]: maps host id 0"},
           {[](v1::NamespaceOption* ns) { ns->mutable_userns_options()->mutable_gids(0)->set_container_id(1); },
            "namespace_options.userns_options.gids: container id 0 is not mapped"},
           {[](v1::NamespaceOption* ns) { ns->mutable_userns_options()->mutable_uids()->Clear(); },
            "userns_options.uids: no mapping given"},
           {[](v1::NamespaceOption* ns) { ns->mutable_userns_options()->set_mode(v1::TARGET); },
            "userns_options.mode: TARGET is not supported"},
           {[](v1::NamespaceOption* ns) { ns->set_network(v1::NODE); }, "cannot share the host's network"},
       }) {
    grpc::Status s = c.edit ? try_pod(c.edit) : grpc::Status();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.says;
    EXPECT_NE(s.error_message().find(c.says), std::string::npos) << s.error_message();
  }
  EXPECT_EQ(cri_->list_pods().size(), 1u);
  EXPECT_TRUE(fs::is_empty(d_->state() + "/userns"));

  // A container may not ask for a user namespace other than its pod's.
  v1::ContainerConfig c = shell_container("c", "sleep 1");
  set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options(), kHostBase);
  std::string id;
  grpc::Status s = cri_->create_container(pod_, c, &id, pod_config_);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("userns_options: differs from pod"), std::string::npos) << s.error_message();
  EXPECT_TRUE(cri_->list_containers().empty());
}

}  // namespace
}  // namespace berth::test
