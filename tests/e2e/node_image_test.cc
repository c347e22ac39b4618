// berth's node image (packaging/node-image) end to end: a test berthd on the host pulls the image
// from the local registry and runs it as a privileged container, with a host directory as its
// state volume (/var/lib/berth: overlay cannot nest on the container's own overlay) and one for
// its socket; the host's CRI client then talks to the nested berthd through that socket, which
// pulls busybox from the same registry and runs a pod on a bridge network with a port mapping
// (the image's CNI plugins and iptables) whose container's log shows up on the host.
// Everything is removed on both levels, and nothing is left on either: the nested berthd lists no
// pod, container or image, and the census of its root and state (seen through the node's mount
// namespace: mounts, netns pins, bundles, records, snapshots and blobs; its pods' cgroups and
// processes, the bridge's addresses, veths and portmap rules) finds nothing while it still runs;
// then no mount under the volumes, no nested socket, and the host's census of the outer berthd
// finds nothing either.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "berth/test/cri_client.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_leftovers.h"
#include "berth/test/test_network.h"

namespace berth::test {
namespace {

using namespace std::chrono_literals;

// Mount points at or below `dir`.
std::vector<std::string> mounts_below(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string a, b, c, d, target;
    f >> a >> b >> c >> d >> target;
    if (target == dir || target.rfind(dir + "/", 0) == 0) out.push_back(target);
  }
  return out;
}

class NodeImage : public DaemonTest {
 protected:
  static void SetUpTestSuite() {
    registry_ = new RegistryProcess();
    push_test_images(registry_->url(), {"--only", "busybox"});
    // The package from this build dir, then the image from the package.
    debs_ = new TempDir("berth-node-deb");
    std::string out =
        shell("cd " BERTH_BINARY_DIR " && cpack -G DEB -B " + debs_->path() +
              " -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip 2>&1 && ls " + debs_->path() + "/berth_*_amd64.deb");
    std::string deb = out.substr(out.rfind('\n', out.size() - 2) + 1);
    while (!deb.empty() && deb.back() == '\n') deb.pop_back();
    std::string pushed = shell(std::string(BERTH_SOURCE_DIR) + "/packaging/node-image/build-node-image " +
                               registry_->url() + " --deb " + deb + " --tag test");
    auto j = nlohmann::json::parse(pushed, nullptr, false);
    if (j.is_object() && j.contains("reference"))
      image_ = j["reference"];
    else
      build_log_ = out + "\n" + pushed;
  }
  static void TearDownTestSuite() {
    delete registry_;
    delete debs_;
  }
  static std::string busybox() { return registry_->host() + "/test/busybox:latest"; }

  static inline RegistryProcess* registry_ = nullptr;
  static inline TempDir* debs_ = nullptr;
  static inline std::string image_, build_log_;
};

TEST_F(NodeImage, RunsBerthNestedAndAPodInIt) {
  ASSERT_FALSE(image_.empty()) << "the node image was not built: " << build_log_;
  DaemonProcess& outer = daemon({.test_network = false});
  CriClient host(outer);
  ASSERT_OK(host.pull_image(image_));

  TempDir volume("berth-node-state"), socket_dir("berth-node-socket"), logs("berth-node-logs");
  // The nested pods' network: a bridge and subnet made for this test (the node shares the host's
  // network namespace, so its bridge, veths and portmap rules are made there, through the image's
  // own CNI plugins and iptables), its conf dir and host-local store mounted at their host paths.
  TestNetwork net;
  // The node: privileged, on the host's network (the registry is on the host's loopback).
  v1::PodSandboxConfig node_pod = test_pod("berth-node");
  node_pod.set_log_directory(logs.path());
  auto* sc = node_pod.mutable_linux()->mutable_security_context();
  sc->set_privileged(true);
  sc->mutable_namespace_options()->set_network(v1::NODE);
  std::string node_pod_id;
  ASSERT_OK(host.run_pod(node_pod, &node_pod_id));
  v1::ContainerConfig node = test_container("berthd", image_, {});
  node.mutable_linux()->mutable_security_context()->set_privileged(true);
  for (const auto& a :
       {"--config", "/etc/berth/berth.toml", "--socket", "/run/berth-socket/berth.sock", "--log-level", "debug"})
    node.add_args(a);
  auto* m = node.add_mounts();
  m->set_host_path(volume.path());
  m->set_container_path("/var/lib/berth");
  m = node.add_mounts();
  m->set_host_path(socket_dir.path());
  m->set_container_path("/run/berth-socket");
  m = node.add_mounts();
  m->set_host_path(net.conf_dir());
  m->set_container_path("/etc/cni/net.d");
  m = node.add_mounts();
  m->set_host_path(net.ipam_dir());
  m->set_container_path(net.ipam_dir());
  std::string node_id;
  ASSERT_OK(host.create_container(node_pod_id, node, &node_id, node_pod));
  ASSERT_OK(host.start_container(node_id));

  // The nested berthd answers on the socket the host sees.
  std::string nested_socket = socket_dir / "berth.sock";
  auto channel = grpc::CreateChannel("unix:" + nested_socket, grpc::InsecureChannelCredentials());
  CriClient nested(channel);
  bool up = false;
  for (auto deadline = std::chrono::steady_clock::now() + 60s; !up && std::chrono::steady_clock::now() < deadline;) {
    v1::StatusResponse st;
    up = ::access(nested_socket.c_str(), F_OK) == 0 && nested.status(&st).ok();
    if (!up) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(up) << "nested berthd did not serve:\n" << read_file(logs / "berthd.log");

  // A pod in the nested berthd, logging into the state volume (which the host sees).
  ASSERT_OK(nested.pull_image(busybox()));
  v1::PodSandboxConfig pod = test_pod("nested");
  pod.set_log_directory("/var/lib/berth/pod-logs");
  // A cgroup parent of the nested pods' own, so that their census is apart from the host's pods
  // (the node's among them) and another run's; below the test parent, which the fixture removes
  // on the host whichever way the node's cgroup mount shows the hierarchy.
  const std::string nested_parent = "/berth-test-pods/nested-" + std::to_string(::getpid());
  pod.mutable_linux()->set_cgroup_parent(nested_parent);
  auto* port = pod.add_port_mappings();
  port->set_container_port(8080);
  port->set_host_port(free_loopback_port());
  port->set_host_ip("127.0.0.1");
  std::string pod_id;
  grpc::Status s = nested.run_pod(pod, &pod_id);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << read_file(logs / "berthd.log");
  v1::PodSandboxStatusResponse ps;
  ASSERT_OK(nested.pod_status(pod_id, &ps, false));
  EXPECT_EQ(ps.status().network().ip().rfind(net.subnet_prefix(), 0), 0u) << ps.status().network().ip();
  EXPECT_EQ(net.veths().size(), 1u);
  EXPECT_FALSE(net.nat_rules_naming(net.name()).empty()) << "portmap's rules, made with the image's iptables";
  std::string cid;
  ASSERT_OK(nested.create_container(
      pod_id,
      test_container("hello", busybox(), {"/bin/sh", "-c", "echo hello from the nested berth; exec sleep 1000"}), &cid,
      pod));
  ASSERT_OK(nested.start_container(cid));
  bool logged = false;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       !logged && std::chrono::steady_clock::now() < deadline;) {
    logged = read_file(volume / "pod-logs/hello.log").find("hello from the nested berth") != std::string::npos;
    if (!logged) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(logged) << read_file(volume / "pod-logs/hello.log") << read_file(logs / "berthd.log");

  // The nested pod's cgroups nest below the node container's own: on a v1 host each hierarchy the
  // nested berthd sees is a bind of that container's cgroup, and its pods must still get theirs.
  v1::ExecSyncResponse cgroups;
  ASSERT_OK(nested.exec_sync(cid, {"cat", "/proc/self/cgroup"}, &cgroups));
  std::istringstream cgroup_lines(cgroups.stdout());
  int lines = 0;
  for (std::string line; std::getline(cgroup_lines, line);) {
    // v1's memory and pids hierarchies, or v2's one unless a cgroup namespace hides the path.
    bool checked =
        line.find(":memory:") != std::string::npos || line.find(":pids:") != std::string::npos ||
        (line.rfind("0::", 0) == 0 && cgroups.stdout().find(":memory:") == std::string::npos && line != "0::/");
    if (!checked) continue;
    ++lines;
    EXPECT_NE(line.find(nested_parent + "/"), std::string::npos) << "not in the nested pod's cgroup: " << line;
  }
  if (cgroups.stdout() != "0::/\n") {
    EXPECT_GT(lines, 0) << cgroups.stdout();
  }

  // The census of the nested berthd (seen through the node's namespaces) sees what its pod and
  // running container hold, so that finding nothing after the removal means something.
  v1::ContainerStatusResponse node_status;
  ASSERT_OK(host.container_status(node_id, &node_status, true));
  const int node_pid = nlohmann::json::parse(node_status.info().at("info"))["pid"].get<int>();
  ASSERT_GT(node_pid, 0);
  const LeftoverScope nested_scope{.root = "/var/lib/berth",
                                   .state = "/run/berth",
                                   .cgroup_parent = nested_parent,
                                   .network = &net,
                                   .images_removed = true,
                                   .nested_in_pid = node_pid};
  std::string live;
  for (const auto& l : host_leftovers(nested_scope)) live += l + "\n";
  for (const char* kind :
       {"mount: /run/berth/", "cgroup: ", "process: ", "netns pin: ", "sandbox checkpoint: ", "veth: ", "blob: "})
    EXPECT_NE(live.find(kind), std::string::npos) << kind << " not in the census of the running nested pod:\n" << live;

  // Removed at both levels.
  ASSERT_OK(nested.stop_container(cid, 0));
  ASSERT_OK(nested.remove_container(cid));
  ASSERT_OK(nested.stop_pod(pod_id));
  ASSERT_OK(nested.remove_pod(pod_id));
  ASSERT_OK(nested.remove_image(busybox()));
  EXPECT_TRUE(nested.list_pods().empty());
  EXPECT_TRUE(nested.list_containers().empty());
  EXPECT_TRUE(nested.list_images().empty());
  EXPECT_TRUE(net.nat_rules_naming(net.name()).empty());
  EXPECT_EQ(host_leftovers(nested_scope), std::vector<std::string>{}) << read_file(logs / "berthd.log");
  ASSERT_OK(host.stop_container(node_id, 20));  // SIGTERM: tini hands it to berthd, which drains and exits
  v1::ContainerStatusResponse st;
  ASSERT_OK(host.container_status(node_id, &st));
  EXPECT_EQ(st.status().exit_code(), 0) << read_file(logs / "berthd.log");
  ASSERT_OK(host.remove_container(node_id));
  ASSERT_OK(host.stop_pod(node_pod_id));
  ASSERT_OK(host.remove_pod(node_pod_id));
  ASSERT_OK(host.remove_image(image_));
  EXPECT_TRUE(host.list_pods().empty());
  EXPECT_TRUE(host.list_containers().empty());
  EXPECT_EQ(::access(nested_socket.c_str(), F_OK), -1) << "the nested berthd left its socket";
  EXPECT_TRUE(mounts_below(volume.path()).empty());
  EXPECT_TRUE(mounts_below(socket_dir.path()).empty());
  EXPECT_EQ(host_leftovers({.root = outer.root(),
                            .state = outer.state(),
                            .cgroup_parent = test_cgroup_parent(),
                            .images_removed = true}),
            std::vector<std::string>{});
}

}  // namespace
}  // namespace berth::test
