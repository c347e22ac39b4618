// NRI end to end: berthd with [nri] on, real containers, and plugins that are not berth's code
// (tests/nri/nri-test-plugin.py: Python, the wire done by hand from the schema), started by
// berthd from its plugin directory or connecting to its socket. Each event reaches a subscribed
// plugin in order (through StateChange for a plugin without the dedicated methods); a plugin's
// env, mount, device, CPU set and memory limit are seen in the container and its cgroup; a
// plugin's own update lands in the cgroup; a plugin that hangs is timed out and the pod still
// starts; two plugins setting one field fail the create naming both, leaving nothing behind.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "berth/test/cri_client.h"
#include "berth/test/eventually.h"
#include "berth/test/helper_process.h"
#include "berth/test/host_cgroup.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

const std::string kPluginScript = std::string(BERTH_SOURCE_DIR) + "/tests/nri/nri-test-plugin.py";
const std::string kApiProto = std::string(BERTH_SOURCE_DIR) + "/api/nri/api.proto";

class Nri : public PodFixture {
 protected:
  void SetUp() override {
    PodFixture::SetUp();
    nri_ = std::make_unique<TempDir>("berth-nri");
    ::mkdir((*nri_ / "plugins").c_str(), 0755);
    ::mkdir((*nri_ / "conf").c_str(), 0755);
  }

  // A plugin berthd starts from its directory: a program named NN-name running the test plugin,
  // its behaviour in conf/NN-name.conf (given to it by Configure).
  void add_plugin(const std::string& file, nlohmann::json behaviour) {
    write_file(*nri_ / ("plugins/" + file),
               "#!/bin/sh\nexec /usr/bin/python3 " + kPluginScript + " --proto " + kApiProto + "\n", 0755);
    write_file(*nri_ / ("conf/" + file + ".conf"), behaviour.dump());
  }

  DaemonOptions options(int request_timeout_ms = 2000) {
    DaemonOptions o;
    o.config_toml = "[nri]\nenable = true\nsocket_path = \"" + socket() + "\"\nplugin_path = \"" + (*nri_ / "plugins") +
                    "\"\nplugin_config_path = \"" + (*nri_ / "conf") +
                    "\"\nplugin_request_timeout_ms = " + std::to_string(request_timeout_ms) + "\n";
    return o;
  }
  std::string socket() const { return *nri_ / "nri.sock"; }
  std::string log_path(const std::string& name) const { return *nri_ / (name + ".jsonl"); }

  // The plugin's log: one object per call it got.
  std::vector<nlohmann::json> plugin_log(const std::string& name) {
    std::vector<nlohmann::json> out;
    std::istringstream in(read_file(log_path(name)));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  std::vector<std::string> methods(const std::string& name) {
    std::vector<std::string> out;
    for (const auto& l : plugin_log(name)) {
      std::string m = l.value("method", "");
      if (m == "StateChange") m += ":" + l["request"].value("event", "");
      out.push_back(m);
    }
    return out;
  }
  bool logged(const std::string& name, const std::string& method) {
    auto m = methods(name);
    return std::find(m.begin(), m.end(), method) != m.end();
  }

  std::unique_ptr<TempDir> nri_;
};

// `want` appears in `got` in this order (other entries may come between).
::testing::AssertionResult in_order(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  size_t i = 0;
  for (const auto& g : got)
    if (i < want.size() && g == want[i]) ++i;
  if (i == want.size()) return ::testing::AssertionSuccess();
  std::string all;
  for (const auto& g : got) all += g + " ";
  return ::testing::AssertionFailure() << "\"" << want[i] << "\" missing in order from: " << all;
}

TEST_F(Nri, EveryEventReachesTheSubscribedPluginsInOrder) {
  add_plugin("10-events", {{"log", log_path("events")}});
  // A plugin of an older API: only StateChange for the events that have it.
  add_plugin("20-old", {{"log", log_path("old")},
                        {"unimplemented",
                         {"RunPodSandbox", "StopPodSandbox", "RemovePodSandbox", "PostCreateContainer",
                          "StartContainer", "PostStartContainer", "PostUpdateContainer", "RemoveContainer"}}});
  // Subscribed to CreateContainer only: gets nothing else.
  add_plugin("30-create-only", {{"log", log_path("create-only")}, {"events", {"CREATE_CONTAINER"}}});
  auto& cri = ready("pod", options());
  std::string id = run(shell_container("c", "sleep 1000"));
  v1::LinuxContainerResources update;
  update.set_memory_limit_in_bytes(96 << 20);
  ASSERT_OK(cri.update_resources(id, update));
  ASSERT_OK(cri.stop_container(id, 0));
  ASSERT_OK(cri.remove_container(id));
  ASSERT_OK(cri.stop_pod(pod_));
  ASSERT_OK(cri.remove_pod(pod_));

  // "registered" is logged once the plugin knows its log file (from Configure's config).
  EXPECT_TRUE(logged("events", "registered"));
  EXPECT_TRUE(in_order(methods("events"), {"Configure", "Synchronize", "synchronized", "RunPodSandbox",
                                           "CreateContainer", "PostCreateContainer", "StartContainer",
                                           "PostStartContainer", "UpdateContainer", "PostUpdateContainer",
                                           "StopContainer", "RemoveContainer", "StopPodSandbox", "RemovePodSandbox"}));
  EXPECT_TRUE(
      in_order(methods("old"), {"StateChange:RUN_POD_SANDBOX", "CreateContainer", "StateChange:POST_CREATE_CONTAINER",
                                "StateChange:START_CONTAINER", "StateChange:POST_START_CONTAINER", "UpdateContainer",
                                "StateChange:POST_UPDATE_CONTAINER", "StopContainer", "StateChange:REMOVE_CONTAINER",
                                "StateChange:STOP_POD_SANDBOX", "StateChange:REMOVE_POD_SANDBOX"}));
  auto only = methods("create-only");
  EXPECT_EQ(std::count(only.begin(), only.end(), "CreateContainer"), 1);
  EXPECT_FALSE(logged("create-only", "RunPodSandbox"));
  EXPECT_FALSE(logged("create-only", "StartContainer"));

  // What the plugin was shown: the pod's identity and the container's, its args and the update.
  for (const auto& l : plugin_log("events")) {
    if (l["method"] == "RunPodSandbox") {
      EXPECT_EQ(l["request"]["pod"]["id"], pod_);
      EXPECT_EQ(l["request"]["pod"]["name"], "pod");
    }
    if (l["method"] == "CreateContainer") {
      EXPECT_EQ(l["request"]["container"]["name"], "c");
      EXPECT_EQ(l["request"]["container"]["pod_sandbox_id"], pod_);
      EXPECT_EQ(l["request"]["container"]["args"], nlohmann::json({"/bin/sh", "-c", "sleep 1000"}));
    }
    if (l["method"] == "StartContainer") {
      EXPECT_EQ(l["request"]["container"]["id"], id);
    }
    if (l["method"] == "UpdateContainer") {
      EXPECT_EQ(l["request"]["linux_resources"]["memory"]["limit"]["value"], std::to_string(96 << 20));
    }
  }
}

TEST_F(Nri, AnAdjustmentIsSeenInTheContainerAndItsCgroup) {
  TempDir host("berth-nri-mount");
  write_file(host / "file", "from the plugin\n");
  nlohmann::json adjust = {
      {"env", {{{"key", "NRI_INJECTED"}, {"value", "yes"}}}},
      {"mounts", {{{"destination", "/nri"}, {"type", "bind"}, {"source", host.path()}, {"options", {"rbind", "ro"}}}}},
      {"linux",
       {{"devices",
         {{{"path", "/dev/nri-null"}, {"type", "c"}, {"major", 1}, {"minor", 3}, {"file_mode", {{"value", 438}}}}}},
        {"resources", {{"cpu", {{"cpus", "0"}}}, {"memory", {{"limit", {{"value", 64 << 20}}}}}}}}}};
  add_plugin("10-adjust", {{"log", log_path("adjust")}, {"adjust", adjust}, {"adjust_only", "adjusted"}});
  ready("pod", options());
  std::string id = run(shell_container("adjusted", "sleep 1000"));
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c", "echo $NRI_INJECTED"}), "yes\n");
  EXPECT_EQ(exec_out(id, {"cat", "/nri/file"}), "from the plugin\n");
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c", "test -c /dev/nri-null && echo x > /dev/nri-null && echo written"}),
            "written\n");
  EXPECT_EQ(exec_out(id, {"/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status"}), "Cpus_allowed_list:\t0\n");
  std::string cg = test_cgroup_parent() + "/" + id;
  EXPECT_EQ(read_file(host_cgroup_file(cg, "memory", "memory.limit_in_bytes", "memory.max")),
            std::to_string(64 << 20) + "\n");
  EXPECT_EQ(read_file(host_cgroup_file(cg, "cpuset", "cpuset.cpus", "cpuset.cpus")), "0\n");
  // Another container of the pod is not adjusted.
  std::string other = run(shell_container("other", "sleep 1000"));
  EXPECT_EQ(exec_out(other, {"/bin/sh", "-c", "echo ${NRI_INJECTED:-unset}"}), "unset\n");
}

TEST_F(Nri, APluginsOwnUpdateOfARunningContainerLandsInItsCgroup) {
  add_plugin(
      "10-updater",
      {{"log", log_path("updater")},
       {"after_start_update",
        {{{"container_id", ""}, {"linux", {{"resources", {{"memory", {{"limit", {{"value", 80 << 20}}}}}}}}}}}}});
  ready("pod", options());
  auto c = shell_container("c", "sleep 1000");
  c.mutable_linux()->mutable_resources()->set_memory_limit_in_bytes(64 << 20);
  std::string id = run(c);
  std::string cg = test_cgroup_parent() + "/" + id;
  EXPECT_TRUE(eventually([&] {
    return read_file(host_cgroup_file(cg, "memory", "memory.limit_in_bytes", "memory.max")) ==
           std::to_string(80 << 20) + "\n";
  }));
  EXPECT_TRUE(eventually([&] { return logged("updater", "Runtime/UpdateContainers"); }));
  for (const auto& l : plugin_log("updater"))
    if (l["method"] == "Runtime/UpdateContainers") {
      EXPECT_FALSE(l.contains("error")) << l.dump();
    }
}

TEST_F(Nri, APluginThatHangsIsDisconnectedAndThePodStillStarts) {
  add_plugin("10-hangs", {{"log", log_path("hangs")}, {"hang", {"RunPodSandbox"}}});
  add_plugin("20-fine", {{"log", log_path("fine")}});
  auto& cri = ready("pod", options(500));
  std::string id = run(shell_container("c", "sleep 1000"));
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
  // The hung plugin got no event after the one it hung on; the other got them all.
  EXPECT_FALSE(logged("hangs", "CreateContainer"));
  EXPECT_TRUE(logged("fine", "RunPodSandbox"));
  EXPECT_TRUE(logged("fine", "CreateContainer"));
  EXPECT_NE(d_->log().find("nri: plugin 10-hangs disconnected: RunPodSandbox"), std::string::npos);
  // Its program was ended (no process left with the environment berthd gave it).
  EXPECT_TRUE(
      eventually([&] { return shell("grep -lsx 'NRI_PLUGIN_NAME=hangs' -z /proc/[0-9]*/environ || true").empty(); }));
  ASSERT_OK(cri.stop_container(id, 0));
}

TEST_F(Nri, TwoPluginsSettingOneFieldFailTheCreateNamingBoth) {
  add_plugin("10-a", {{"adjust", {{"env", {{{"key", "SHARED"}, {"value", "a"}}}}}}});
  add_plugin("20-b", {{"adjust", {{"env", {{{"key", "SHARED"}, {"value", "b"}}}}}}});
  auto& cri = ready("pod", options());
  std::string id;
  grpc::Status s = cri.create_container(pod_, shell_container("c", "sleep 1000"), &id, pod_config_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("plugins \"10-a\" and \"20-b\" both tried to set environment variable SHARED"),
            std::string::npos)
      << s.error_message();
  // Nothing of the container is left: not listed, its name free again.
  grpc::ClientContext ctx;
  v1::ListContainersRequest req;
  v1::ListContainersResponse list;
  ASSERT_TRUE(cri.runtime().ListContainers(&ctx, req, &list).ok());
  EXPECT_EQ(list.containers_size(), 0);
}

TEST_F(Nri, APluginsErrorFailsTheCallNamingThePlugin) {
  add_plugin("10-fails", {{"fail", {{"CreateContainer", "refused by the node's policy"}}}});
  auto& cri = ready("pod", options());
  std::string id;
  grpc::Status s = cri.create_container(pod_, shell_container("c", "sleep 1000"), &id, pod_config_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("nri: plugin 10-fails failed CreateContainer: "), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("refused by the node's policy"), std::string::npos) << s.error_message();
}

TEST_F(Nri, AnEvictionAPluginAsksStopsTheContainer) {
  add_plugin("10-evicts", {{"log", log_path("evicts")},
                           {"after_start_evict", {{{"container_id", ""}, {"reason", "over its share"}}}}});
  ready("pod", options());
  std::string id = run(shell_container("c", "sleep 1000"));
  EXPECT_EQ(wait_exited(id).state(), v1::CONTAINER_EXITED);
  EXPECT_NE(d_->log().find("nri: plugin 10-evicts evicts container " + id + ": over its share"), std::string::npos);
}

TEST_F(Nri, APodResizeIsPassedToPlugins) {
  add_plugin("10-pods", {{"log", log_path("pods")}, {"events", {"UPDATE_POD_SANDBOX", "POST_UPDATE_POD_SANDBOX"}}});
  auto& cri = ready("pod", options());
  v1::UpdatePodSandboxResourcesRequest req;
  req.set_pod_sandbox_id(pod_);
  req.mutable_overhead()->set_memory_limit_in_bytes(16 << 20);
  req.mutable_resources()->set_memory_limit_in_bytes(256 << 20);
  req.mutable_resources()->set_cpu_shares(512);
  v1::UpdatePodSandboxResourcesResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = cri.runtime().UpdatePodSandboxResources(&ctx, req, &resp);
  auto log = plugin_log("pods");
  auto it = std::find_if(log.begin(), log.end(), [](const auto& l) { return l["method"] == "UpdatePodSandbox"; });
  ASSERT_NE(it, log.end());
  const auto& r = (*it)["request"];
  EXPECT_EQ(r["pod"]["id"], pod_);
  EXPECT_EQ(r["linux_resources"]["memory"]["limit"]["value"], std::to_string(256 << 20));
  EXPECT_EQ(r["linux_resources"]["cpu"]["shares"]["value"], "512");
  EXPECT_EQ(r["overhead_linux_resources"]["memory"]["limit"]["value"], std::to_string(16 << 20));
  // PostUpdatePodSandbox follows only a resize that was done.
  EXPECT_EQ(logged("pods", "PostUpdatePodSandbox"), s.ok()) << s.error_message();
}

TEST_F(Nri, NoContainerIsCreatedWhileARequiredPluginIsNotRunning) {
  add_plugin("10-present", {{"events", {"RUN_POD_SANDBOX"}}});
  auto o = options();
  o.config_toml += "required_plugins = [\"present\", \"guard\"]\n";
  auto& cri = ready("pod", o);
  std::string id;
  grpc::Status s = cri.create_container(pod_, shell_container("c", "sleep 1000"), &id, pod_config_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("nri: required plugin \"guard\" is not running"), std::string::npos)
      << s.error_message();
  // The guard connects: containers are created again.
  write_file(*nri_ / "guard.json",
             nlohmann::json({{"log", log_path("guard")}, {"events", {"START_CONTAINER"}}}).dump());
  ChildProcess guard;
  guard.start({"/usr/bin/python3", kPluginScript, "--proto", kApiProto, "--socket", socket(), "--name", "guard",
               "--idx", "50", "--config", *nri_ / "guard.json"},
              *nri_ / "guard.out");
  // berthd logs the registration once the plugin is among its plugins (after its synchronisation).
  ASSERT_TRUE(eventually([&] { return d_->log().find("nri: plugin 50-guard registered") != std::string::npos; }))
      << read_file(*nri_ / "guard.out");
  std::string started = run(shell_container("c", "sleep 1000"));
  EXPECT_EQ(status(started).state(), v1::CONTAINER_RUNNING);
}

TEST_F(Nri, AValidatorSeesTheMergedAdjustmentWithItsOwnersAndCanRefuseIt) {
  add_plugin("10-adjust", {{"adjust", {{"env", {{{"key", "FROM_A"}, {"value", "1"}}}}}}});
  add_plugin("90-validator", {{"log", log_path("validator")},
                              {"events", {"VALIDATE_CONTAINER_ADJUSTMENT"}},
                              {"validate", {{"reject", true}, {"reason", "not on this node"}}}});
  auto& cri = ready("pod", options());
  std::string id;
  grpc::Status s = cri.create_container(pod_, shell_container("c", "sleep 1000"), &id, pod_config_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.error_message().find("validator \"90-validator\" rejected container adjustment, reason: not on this node"),
      std::string::npos)
      << s.error_message();
  auto log = plugin_log("validator");
  auto it =
      std::find_if(log.begin(), log.end(), [](const auto& l) { return l["method"] == "ValidateContainerAdjustment"; });
  ASSERT_NE(it, log.end());
  const auto& req = (*it)["request"];
  EXPECT_EQ(req["adjust"]["env"][0]["key"], "FROM_A");
  // The container as it was before any plugin, and who set what (Env is field 6 of api.Field).
  for (const auto& e : req["container"].value("env", nlohmann::json::array())) EXPECT_NE(e, "FROM_A=1");
  const auto& owners = req["owners"]["owners"].begin().value();
  EXPECT_EQ(owners["compound"]["6"]["owners"]["FROM_A"], "10-adjust");
  EXPECT_EQ(req["plugins"].size(), 2u);
}

TEST_F(Nri, AnExternalPluginIsToldWhatExistsAndGetsWhatFollows) {
  auto& cri = ready("pod", options());
  std::string first = run(shell_container("first", "sleep 1000"));
  write_file(*nri_ / "external.json", nlohmann::json({{"log", log_path("external")}}).dump());
  ChildProcess plugin;
  plugin.start({"/usr/bin/python3", kPluginScript, "--proto", kApiProto, "--socket", socket(), "--name", "external",
                "--idx", "50", "--config", *nri_ / "external.json"},
               *nri_ / "external.out");
  ASSERT_TRUE(eventually([&] { return d_->log().find("nri: plugin 50-external registered") != std::string::npos; }))
      << read_file(*nri_ / "external.out");
  for (const auto& l : plugin_log("external"))
    if (l["method"] == "synchronized") {
      EXPECT_EQ(l["pods"], 1);
      EXPECT_EQ(l["containers"], 1);
    }
  bool saw_first = false;
  for (const auto& l : plugin_log("external"))
    if (l["method"] == "Synchronize")
      for (const auto& c : l["request"].value("containers", nlohmann::json::array()))
        saw_first = saw_first || c["id"] == first;
  EXPECT_TRUE(saw_first);
  std::string second = run(shell_container("second", "sleep 1000"));
  EXPECT_TRUE(logged("external", "CreateContainer"));
  EXPECT_TRUE(logged("external", "PostStartContainer"));
  // The plugin goes away: berthd carries on without it.
  plugin.stop();
  ASSERT_OK(cri.stop_container(second, 0));
  std::string third = run(shell_container("third", "sleep 1000"));
  EXPECT_EQ(status(third).state(), v1::CONTAINER_RUNNING);
}

}  // namespace
}  // namespace berth::test
