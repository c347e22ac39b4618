// Pods with user namespaces of their own (hostUsers: false), with real runc and the real kernel:
// root in the container is an unprivileged id on the node, image files show as container root's
// through id-mapped layers, what the container writes is stored under its host ids, ExecSync
// runs in the pod's user namespace, and removal leaves no pin or id-mapped mount. Bad mappings are
// refused, naming the field, and leave nothing.
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>

#include "berth/test/host_leftovers.h"
#include "berth/test/streaming_client.h"
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

// Each of `parts` somewhere in a container's log (one expectation per part).
void expect_in_log(const std::string& log, std::initializer_list<std::string> parts) {
  for (const std::string& part : parts)
    EXPECT_NE(log.find(part), std::string::npos) << "'" << part << "' missing from:\n" << log;
}

class UserNamespaces : public PodFixture {
 protected:
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    push_test_images(registry_->url(), {"--only", "busybox", "--probe-binary", SYSCALL_PROBE_PATH});
  }
  static std::string probe_image() { return registry_->host() + "/test/probe:v1"; }
  // A pod with its own user namespace mapping container ids 0-65535 to host_base and on; `edit`
  // adds to its config.
  void userns_pod(uint32_t host_base, const std::function<void(v1::PodSandboxConfig&)>& edit = {}) {
    ready("host-users-pod");
    // The test's temp dir stands where /run would: the pod's root must be let through it.
    ASSERT_EQ(::chmod(fs::path(d_->state()).parent_path().c_str(), 0711), 0);
    pod_config_ = test_pod("userns-pod");
    pod_config_.set_log_directory(logs_->path());
    set_userns(pod_config_.mutable_linux()->mutable_security_context()->mutable_namespace_options(), host_base);
    if (edit) edit(pod_config_);
    grpc::Status s = cri_->run_pod(pod_config_, &pod_);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  v1::ContainerConfig userns_container(const std::string& name, const std::string& script, uint32_t host_base) {
    v1::ContainerConfig c = shell_container(name, script);
    set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options(), host_base);
    return c;
  }
  LeftoverScope scope() const { return {d_->root(), d_->state(), "", nullptr, false}; }
  // Another pod with its own user namespace, beside the fixture's.
  std::string other_userns_pod(const std::string& name, uint32_t host_base) {
    v1::PodSandboxConfig c = test_pod(name);
    c.set_log_directory(logs_->path());
    set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options(), host_base);
    std::string id;
    grpc::Status s = cri_->run_pod(c, &id);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return id;
  }
  int pid_of(const std::string& id) {
    v1::ContainerStatusResponse cs;
    EXPECT_TRUE(cri_->container_status(id, &cs, true).ok());
    return nlohmann::json::parse(cs.info().at("info"))["pid"].get<int>();
  }
};

void add_mount(v1::ContainerConfig* c, const std::string& host, const std::string& in_container,
               uint32_t idmap_host_base = 0) {
  auto* m = c->add_mounts();
  m->set_host_path(host);
  m->set_container_path(in_container);
  if (idmap_host_base == 0) return;
  for (auto* ids : {m->mutable_uidmappings(), m->mutable_gidmappings()}) {
    auto* id = ids->Add();
    id->set_container_id(0);
    id->set_host_id(idmap_host_base);
    id->set_length(65536);
  }
}

TEST_F(UserNamespaces, RootInThePodIsTheMappedIdOnTheNode) {
  userns_pod(kHostBase);
  v1::StatusResponse st;
  ASSERT_OK(cri_->status(&st));
  ASSERT_GT(st.runtime_handlers_size(), 0);
  EXPECT_TRUE(st.runtime_handlers(0).features().user_namespaces()) << "this kernel has id-mapped overlay layers";

  std::string id =
      run(userns_container("c",
                           "id -u; id -g; cat /proc/self/uid_map; stat -c 'busybox %u:%g' /bin/busybox; "
                           "stat -c 'resolv %u:%g' /etc/resolv.conf; stat -c 'root %u:%g' /; "
                           "echo hi > /written && echo written; touch /dev/shm/x && echo shm; echo done; sleep 1000",
                           kHostBase));
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/c.log", "done")) << log_of("c");
  std::string log = log_of("c");
  EXPECT_NE(log.find("stdout F 0\n"), std::string::npos) << log;  // id -u and id -g
  EXPECT_NE(log.find(" 0   " + std::to_string(kHostBase) + "      65536"), std::string::npos) << log;  // %10u columns
  EXPECT_NE(log.find("busybox 0:0"), std::string::npos) << "image files belong to container root: " << log;
  expect_in_log(log, {"resolv 0:0", "root 0:0", "written", "shm"});

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
  // The pause is in it too (started by berth-pause-launch, not the runtime), as a mapped id.
  int pause = info["pid"].get<int>();
  struct stat pin_st {
  }, pause_ns{};
  ASSERT_EQ(::stat(pin.c_str(), &pin_st), 0);
  ASSERT_EQ(::stat(("/proc/" + std::to_string(pause) + "/ns/user").c_str(), &pause_ns), 0);
  EXPECT_EQ(pin_st.st_ino, pause_ns.st_ino);
  unsigned long pause_uid = std::stoul(proc_status_line(pause, "Uid").substr(5));
  EXPECT_GE(pause_uid, kHostBase);
  EXPECT_LT(pause_uid, kHostBase + 65536);
  EXPECT_EQ(d_->log().find("pause through the runtime"), std::string::npos) << d_->log();

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
           {[](v1::NamespaceOption* ns) { ns->set_pid(v1::NODE); }, "cannot share the host's PID or IPC namespace"},
           {[](v1::NamespaceOption* ns) { ns->set_ipc(v1::NODE); }, "cannot share the host's PID or IPC namespace"},
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

// A volume with the pod's mappings is id-mapped (root's files on the node are container root's,
// and container root writes as node root there); one without is mounted as is (kubelet decides),
// so its root-owned files are the overflow id and closed to the pod. Two pods with other mappings
// cannot read each other's private files in a volume they share.
// user_namespaces_host_network: a pod with a user namespace of its own in the node's network
// namespace (kubelet's hostNetwork with hostUsers: false). It reaches a listener on the node's
// loopback, which a network namespace of its own would not have; its root is the mapped id and
// holds no capability over the node's network (no address added, no port below 1024 bound);
// its /sys is the node's, read-only.
TEST_F(UserNamespaces, APodOnTheHostNetworkKeepsItsUserNamespace) {
  v1::StatusResponse st;
  userns_pod(kHostBase, [](v1::PodSandboxConfig& c) {
    c.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(v1::NODE);
  });
  ASSERT_OK(cri_->status(&st));
  EXPECT_TRUE(st.features().user_namespaces_host_network());
  // A listener of the test's on the node's loopback, on a port the container is told.
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  std::string id = run(userns_container(
      "hostnet",
      "cat /proc/self/uid_map; echo from-the-pod | nc -w 2 127.0.0.1 " + port +
          " && echo connected; ip addr add 192.0.2.77/32 dev lo 2>&1 | sed 's/^/address: /'; "
          "nc -l -p 81 -w 1 2>&1 | sed 's/^/port 81: /'; "
          "touch /sys/x 2>/dev/null || echo sys-read-only; test -d /sys/class/net/lo && echo sys-net; echo done; "
          "sleep 1000",
      kHostBase));
  int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(conn, 0) << log_of("hostnet");
  char buf[64] = {};
  ssize_t n = ::read(conn, buf, sizeof buf - 1);
  ::close(conn);
  ::close(listener);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "from-the-pod\n");
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/hostnet.log", "done")) << log_of("hostnet");
  std::string log = log_of("hostnet");
  EXPECT_NE(log.find(" 0   " + std::to_string(kHostBase) + "      65536"), std::string::npos) << log;
  expect_in_log(log, {"connected", "address: ip: RTNETLINK answers: Operation not permitted",
                      "port 81: nc: bind: Permission denied", "sys-read-only", "sys-net"});
  EXPECT_EQ(::access((d_->state() + "/netns/" + pod_).c_str(), F_OK), -1) << "no network namespace of its own";
  ASSERT_OK(cri_->remove_pod(pod_));
  EXPECT_TRUE(fs::is_empty(d_->state() + "/userns"));
}

TEST_F(UserNamespaces, VolumesAreIdMappedAndPodsWithOtherMappingsAreApart) {
  userns_pod(kHostBase);
  TempDir vol("berth-userns-vol"), shared("berth-userns-shared");
  ASSERT_EQ(::chmod(vol.path().c_str(), 0700), 0);
  write_file(vol / "secret", "vol-secret\n");
  ASSERT_EQ(::chmod((vol / "secret").c_str(), 0600), 0);
  ASSERT_EQ(::chmod(shared.path().c_str(), 01777), 0);

  v1::ContainerConfig a =
      userns_container("a",
                       "cat /vol/secret; stat -c 'vol %u:%g' /vol/secret; echo a > /vol/from-a && echo wrote-vol; "
                       "cat /plain/secret || echo plain-denied; stat -c 'plain %u' /plain; "
                       "echo a > /shared/a && chmod 600 /shared/a && echo shared-written; echo done; sleep 1000",
                       kHostBase);
  add_mount(&a, vol.path(), "/vol", kHostBase);
  add_mount(&a, vol.path(), "/plain");
  add_mount(&a, shared.path(), "/shared");
  std::string a_id = run(a);
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/a.log", "done")) << log_of("a");
  std::string log = log_of("a");
  expect_in_log(log, {"stdout F vol-secret", "vol 0:0", "wrote-vol", "plain-denied", "plain 65534", "shared-written"});
  struct stat sb {};
  ASSERT_EQ(::stat((vol / "from-a").c_str(), &sb), 0);
  EXPECT_EQ(sb.st_uid, 0u) << "container root writes through the id-mapped volume as the volume's root";
  EXPECT_EQ(sb.st_gid, 0u);
  ASSERT_EQ(::stat((shared / "a").c_str(), &sb), 0);
  EXPECT_EQ(sb.st_uid, kHostBase) << "and as its mapped id through a volume that is not id-mapped";
  // ContainerStatus shows the mount's mappings.
  v1::ContainerStatus st = status(a_id);
  ASSERT_EQ(st.mounts_size(), 3);
  ASSERT_EQ(st.mounts(0).uidmappings_size(), 1);
  EXPECT_EQ(st.mounts(0).uidmappings(0).host_id(), kHostBase);

  // Another pod, other host ids, the same shared dir: pod a's private file is closed to it.
  std::string b_pod = other_userns_pod("userns-b", kHostBase + 65536);
  v1::ContainerConfig b = userns_container(
      "b", "cat /shared/a || echo b-denied; stat -c 'a %u' /shared/a; echo done; sleep 1000", kHostBase + 65536);
  add_mount(&b, shared.path(), "/shared");
  std::string b_id;
  v1::PodSandboxConfig b_config = test_pod("userns-b");
  b_config.set_log_directory(logs_->path());
  ASSERT_OK(cri_->create_container(b_pod, b, &b_id, b_config));
  ASSERT_OK(cri_->start_container(b_id));
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/b.log", "done")) << log_of("b");
  EXPECT_NE(log_of("b").find("b-denied"), std::string::npos) << log_of("b");
  EXPECT_NE(log_of("b").find("a 65534"), std::string::npos) << log_of("b") << "pod a's ids are unmapped in pod b";
  EXPECT_EQ(proc_status_line(pid_of(b_id), "Uid").find(std::to_string(kHostBase) + "\t"), std::string::npos);

  // Removal leaves no id-mapped copy mounted.
  for (const std::string& id : {a_id, b_id}) {
    ASSERT_OK(cri_->stop_container(id, 0));
    ASSERT_OK(cri_->remove_container(id));
  }
  ASSERT_OK(cri_->remove_pod(b_pod));
  // (Copies are mounted in the container's bundle, whose path holds its id.)
  std::string mountinfo = read_file("/proc/self/mountinfo");
  for (const std::string& id : {a_id, b_id}) EXPECT_EQ(mountinfo.find(id), std::string::npos) << id;
}

// The paths of the host's mount table (and `extra`) through which user `uid` (no groups) opens each
// of `names` (relative to a mount point): what an unprivileged user of the node reaches.
std::vector<std::string> reachable_by(uid_t uid, const std::vector<std::string>& names,
                                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> candidates = extra;
  std::istringstream mountinfo(read_file("/proc/self/mountinfo"));
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    for (const auto& n : names) candidates.push_back(point + "/" + n);
  }
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return {"pipe"};
  pid_t child = ::fork();
  if (child == 0) {
    ::close(p[0]);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) _exit(1);
    for (const auto& c : candidates) {
      int fd = ::open(c.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) continue;
      ::close(fd);
      std::string line = c + "\n";
      (void)!::write(p[1], line.data(), line.size());
    }
    _exit(0);
  }
  ::close(p[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::vector<std::string> paths;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) paths.push_back(l);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    paths.push_back("(the check as uid " + std::to_string(uid) + " failed)");
  return paths;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// kubelet's pods dir is 0750: a volume source below it is closed to the node's users. Through
// berth it stays so: the pod reads it, and no unprivileged user of the node opens it, the pod's
// /dev/shm or what the container wrote to its rootfs, through any path in the host's mount table
// (the id-mapped copy, the rootfs and the shm mount all sit below a bundle only root and the pod's
// root group can enter).
TEST_F(UserNamespaces, WhatThePodHoldsIsNoMoreReachableOnTheNodeThanItsSource) {
  constexpr uint32_t base = kHostBase + 65536 * 5;
  TempDir closed("berth-userns-closed");
  ASSERT_EQ(::chmod(closed.path().c_str(), 0700), 0);
  fs::create_directories(closed / "volume");
  ASSERT_EQ(::chmod((closed / "volume").c_str(), 0755), 0);
  // Named for this process, so no other test's file of the same name is found in the mount table.
  const std::string secret = "secret-" + std::to_string(::getpid());
  write_file(closed / "volume" + "/" + secret, "volume secret\n", 0644);
  userns_pod(base);
  auto c = userns_container("keeper",
                            "cat /vol/" + secret + "; echo rootfs > /tmp/" + secret + "; chmod 644 /tmp/" + secret +
                                "; " + "echo shm > /dev/shm/" + secret + "; chmod 644 /dev/shm/" + secret +
                                "; echo done; sleep 1000",
                            base);
  add_mount(&c, closed / "volume", "/vol", base);
  run(c);
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/keeper.log", "done")) << log_of("keeper");
  EXPECT_NE(log_of("keeper").find("stdout F volume secret"), std::string::npos) << log_of("keeper");
  const std::vector<std::string> names{secret, "tmp/" + secret};
  const std::vector<std::string> sources{closed / "volume" + "/" + secret};
  // Root reaches them (the check can find what it looks for), and no one else does.
  EXPECT_GE(reachable_by(0, names, sources).size(), 3u);
  for (uid_t user : {65534u, 1000u, base + 65536})
    EXPECT_EQ(joined(reachable_by(user, names, sources)), "") << "what uid " << user << " opens";
}

// Image volumes of a pod with its own user namespace: the image's layers mapped as its rootfs is
// (image root's files are container root's), below the pod's closed dir; kubelet's mappings on the
// mount must be the pod's.
TEST_F(UserNamespaces, ImageVolumesAreMappedAsThePodIs) {
  constexpr uint32_t base = kHostBase + 65536 * 6;
  userns_pod(base);
  auto c = userns_container(
      "imaged", "stat -c 'busybox %u:%g' /img/bin/busybox; /img/bin/busybox echo runs; echo done; sleep 1000", base);
  auto* m = c.add_mounts();
  m->set_container_path("/img");
  m->mutable_image()->set_image(image());
  for (auto* ids : {m->mutable_uidmappings(), m->mutable_gidmappings()}) {
    auto* id = ids->Add();
    id->set_container_id(0);
    id->set_host_id(base);
    id->set_length(65536);
  }
  std::string id = run(c);
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/imaged.log", "done")) << log_of("imaged");
  expect_in_log(log_of("imaged"), {"busybox 0:0", "stdout F runs"});
  struct stat sb {};
  const std::string pod_dir = d_->state() + "/image-volumes/" + pod_;
  ASSERT_EQ(::stat(pod_dir.c_str(), &sb), 0);
  EXPECT_EQ(sb.st_mode & 07777, 0710u);
  EXPECT_EQ(sb.st_gid, base);
  for (uid_t user : {65534u, 1000u})
    EXPECT_EQ(joined(reachable_by(user, {}, {pod_dir})), "") << "what uid " << user << " opens";

  auto other = userns_container("other-map", "sleep 1000", base);
  auto* om = other.add_mounts();
  *om = *m;
  om->mutable_uidmappings(0)->set_host_id(base + 65536);
  std::string other_id;
  grpc::Status refused = cri_->create_container(pod_, other, &other_id, pod_config_);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << refused.error_message();
  EXPECT_NE(refused.error_message().find("an image volume is mapped as its pod's user namespace is"), std::string::npos)
      << refused.error_message();
  ASSERT_OK(cri_->stop_container(id, 0));
  ASSERT_OK(cri_->remove_container(id));
  EXPECT_EQ(read_file("/proc/self/mountinfo").find(pod_dir), std::string::npos) << "the volume went with its last user";
}

// A set-user-ID-root program from the image makes the caller container root, which is the pod's
// mapped id on the node, never node root.
TEST_F(UserNamespaces, SetuidFromTheImageGainsContainerRootNeverNodeRoot) {
  userns_pod(kHostBase);
  ASSERT_OK(cri_->pull_image(probe_image()));
  v1::ContainerConfig c = test_container("setuid", probe_image(), {"/bin/syscall-probe-setuid", "ids", "hold"});
  set_userns(c.mutable_linux()->mutable_security_context()->mutable_namespace_options(), kHostBase);
  c.mutable_linux()->mutable_security_context()->mutable_run_as_user()->set_value(1000);
  std::string id = run(c);
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/setuid.log", "hold: OK")) << log_of("setuid");
  EXPECT_NE(log_of("setuid").find("ids: uid=1000 euid=0"), std::string::npos) << log_of("setuid");
  std::string h = std::to_string(kHostBase);
  EXPECT_EQ(proc_status_line(pid_of(id), "Uid"),
            "Uid:\t" + std::to_string(kHostBase + 1000) + "\t" + h + "\t" + h + "\t" + h);
  // On the node the program belongs to the mapped root too, set-user-ID bit and all.
  struct stat sb {};
  ASSERT_EQ(::stat((d_->state() + "/containers/" + id + "/rootfs/bin/syscall-probe-setuid").c_str(), &sb), 0);
  EXPECT_EQ(sb.st_uid, kHostBase);
  EXPECT_TRUE(sb.st_mode & S_ISUID);
  ASSERT_OK(cri_->remove_container(id));
}

// The pod's namespaced sysctls are set in namespaces its user namespace owns, and capabilities
// count there: CAP_SYS_ADMIN mounts and CAP_NET_ADMIN configures the pod's own, while CAP_SYS_TIME,
// which only the node's user namespace honours, sets no clock.
TEST_F(UserNamespaces, SysctlsAndCapabilitiesActInsideThePodsUserNamespace) {
  const std::string host_port_start = read_file("/proc/sys/net/ipv4/ip_unprivileged_port_start");
  userns_pod(kHostBase, [](v1::PodSandboxConfig& c) {
    (*c.mutable_linux()->mutable_sysctls())["net.ipv4.ip_unprivileged_port_start"] = "80";
    (*c.mutable_linux()->mutable_sysctls())["kernel.shm_rmid_forced"] = "1";
  });
  v1::ContainerConfig c = userns_container(
      "caps",
      "echo port-start $(cat /proc/sys/net/ipv4/ip_unprivileged_port_start); echo rmid $(cat "
      "/proc/sys/kernel/shm_rmid_forced); "
      "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && echo mount-ok; ip link set lo mtu 1400 && echo net-admin-ok; "
      "date -s @$(date +%s); echo done; sleep 1000",
      kHostBase);
  for (const char* cap : {"SYS_ADMIN", "NET_ADMIN", "SYS_TIME"})
    c.mutable_linux()->mutable_security_context()->mutable_capabilities()->add_add_capabilities(cap);
  // Where AppArmor is on, the default profile denies mount whatever the capabilities (as
  // containerd's does); this test is about capabilities, so the container goes without it.
  c.mutable_linux()->mutable_security_context()->mutable_apparmor()->set_profile_type(v1::SecurityProfile::Unconfined);
  run(c);
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/caps.log", "done")) << log_of("caps");
  std::string log = log_of("caps");
  expect_in_log(log,
                {"port-start 80", "rmid 1", "mount-ok", "net-admin-ok", "can't set date: Operation not permitted"});
  EXPECT_EQ(read_file("/proc/sys/net/ipv4/ip_unprivileged_port_start"), host_port_start);
}

// The host path of `pid`'s cgroup file `v2_file` (cgroup v2) or `v1_file` of `controller` (v1).
std::string cgroup_file_of(int pid, const std::string& controller, const std::string& v1_file,
                           const std::string& v2_file) {
  std::istringstream lines(read_file("/proc/" + std::to_string(pid) + "/cgroup"));
  const bool v2 = fs::exists("/sys/fs/cgroup/cgroup.controllers");
  for (std::string line; std::getline(lines, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    std::string ctls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (v2 && ctls.empty()) return "/sys/fs/cgroup" + path + "/" + v2_file;
    if (!v2 && ("," + ctls + ",").find("," + controller + ",") != std::string::npos)
      return "/sys/fs/cgroup/" + controller + path + "/" + v1_file;
  }
  return "";
}

// A userns pod's container has a cgroup of its own with the limits asked, on cgroup v1 and v2. On
// v2 it has a cgroup namespace too: its cgroup is the root it sees, and it reads its own limits
// there although its root is an unprivileged id on the node. The cgroup goes with the container.
TEST_F(UserNamespaces, TheContainersCgroupHasItsLimitsInsideAndOnTheNode) {
  userns_pod(kHostBase);
  v1::ContainerConfig c = userns_container("cg",
                                           "cat /proc/self/cgroup; echo max $(cat /sys/fs/cgroup/memory.max "
                                           "2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes); "
                                           "echo done; sleep 1000",
                                           kHostBase);
  c.mutable_linux()->mutable_resources()->set_memory_limit_in_bytes(64 << 20);
  std::string id = run(c);
  ASSERT_TRUE(wait_for_file_text(logs_->path() + "/cg.log", "done")) << log_of("cg");
  std::string log = log_of("cg");
  expect_in_log(log, {"max 67108864"});
  const bool v2 = fs::exists("/sys/fs/cgroup/cgroup.controllers");
  if (v2) expect_in_log(log, {"stdout F 0::/\n"});

  std::string limit = cgroup_file_of(pid_of(id), "memory", "memory.limit_in_bytes", "memory.max");
  ASSERT_FALSE(limit.empty());
  EXPECT_EQ(read_file(limit), "67108864\n") << limit;
  ASSERT_OK(cri_->stop_container(id, 0));
  ASSERT_OK(cri_->remove_container(id));
  EXPECT_FALSE(fs::exists(fs::path(limit).parent_path())) << "the container's cgroup is left: " << limit;
}

// Logs, Attach, port-forward and stats work in a pod with a user namespace.
TEST_F(UserNamespaces, StreamingAndStatsWorkInAUserNamespacePod) {
  userns_pod(kHostBase);
  v1::ContainerConfig echo = userns_container("echo", "nc -ll -p 8080 -e /bin/cat", kHostBase);
  std::string echo_id = run(echo);
  v1::ContainerConfig reader = userns_container("reader", "while read line; do echo got-$line; done", kHostBase);
  reader.set_stdin(true);
  std::string reader_id = run(reader);

  grpc::ClientContext actx;
  v1::AttachRequest areq;
  areq.set_container_id(reader_id);
  areq.set_stdin(true);
  areq.set_stdout(true);
  areq.set_stderr(true);
  v1::AttachResponse aresp;
  ASSERT_OK(cri_->runtime().Attach(&actx, areq, &aresp));
  auto attach = RemoteCommandClient::connect(aresp.url(), {.transport = Transport::spdy, .stdin = true});
  ASSERT_TRUE(attach.ok()) << attach.status().message();
  ASSERT_TRUE((*attach)->send_stdin("one\n").ok());
  EXPECT_TRUE((*attach)->wait_stdout("got-one", 30s));
  EXPECT_TRUE(wait_for_file_text(logs_->path() + "/reader.log", "stdout F got-one"));
  (*attach)->abort();

  grpc::ClientContext pctx;
  v1::PortForwardRequest preq;
  preq.set_pod_sandbox_id(pod_);
  v1::PortForwardResponse presp;
  ASSERT_OK(cri_->runtime().PortForward(&pctx, preq, &presp));
  std::string payload = "through the pod's netns, owned by its user namespace";
  bool echoed = false;
  // The listener may not be up yet: a refused stream is retried.
  for (int attempt = 0; attempt < 50 && !echoed; ++attempt) {
    auto pf =
        PortForwardClient::connect(presp.url(), {.transport = Transport::spdy, .protocols = {"portforward.k8s.io"}});
    ASSERT_TRUE(pf.ok()) << pf.status().message();
    auto s = (*pf)->open(8080);
    ASSERT_TRUE(s.ok()) << s.status().message();
    if ((*s)->write(payload).ok()) {
      auto got = (*s)->read_exact(payload.size(), 5s);
      echoed = got.ok() && *got == payload;
    }
    if (!echoed) std::this_thread::sleep_for(100ms);
    if (!echoed) {
      grpc::ClientContext again;
      ASSERT_OK(cri_->runtime().PortForward(&again, preq, &presp));
    }
  }
  EXPECT_TRUE(echoed);

  grpc::ClientContext sctx;
  v1::ContainerStatsRequest sreq;
  sreq.set_container_id(echo_id);
  v1::ContainerStatsResponse stats;
  ASSERT_OK(cri_->runtime().ContainerStats(&sctx, sreq, &stats));
  EXPECT_GT(stats.stats().memory().working_set_bytes().value(), 0u);
  EXPECT_GT(stats.stats().cpu().timestamp(), 0);
  grpc::ClientContext pstx;
  v1::PodSandboxStatsRequest psreq;
  psreq.set_pod_sandbox_id(pod_);
  v1::PodSandboxStatsResponse pstats;
  ASSERT_OK(cri_->runtime().PodSandboxStats(&pstx, psreq, &pstats));
  EXPECT_GT(pstats.stats().linux().memory().working_set_bytes().value(), 0u);
}

}  // namespace
}  // namespace berth::test
