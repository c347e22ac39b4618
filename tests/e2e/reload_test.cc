// A reload changes what an operator changes in place, with pods running: runtime handlers (the GPU
// operators' flow: a drop-in adds a handler, SIGHUP, a pod asks for it), default_runtime, CDI spec
// dirs, default_ulimits and pinned_images, each seen in what the next pod, container or image call
// gets; a handler removed
// keeps stopping and removing what it made; a handler's root waits for a restart.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "berth/test/cri_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ReloadWithPods : public PodFixture {
 protected:
  // Writes (or, with empty text, removes) drop-in <name>, sends SIGHUP and waits for the reload's
  // line "config: reloaded from ...: <what>" after the previous one.
  void reload_with(const std::string& name, const std::string& text, const std::string& what) {
    const std::string drop_ins = d_->dir() + "/berth.toml.d";
    ::mkdir(drop_ins.c_str(), 0755);
    if (text.empty())
      ::unlink((drop_ins + "/" + name).c_str());
    else
      write_file(drop_ins + "/" + name, text);
    ::kill(d_->pid(), SIGHUP);
    for (int i = 0; i < 1000; ++i) {
      std::string log = d_->log();
      size_t at = log.find("config: reloaded from ", mark_);
      if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
        std::string line = log.substr(at, log.find('\n', at) - at);
        mark_ = at + line.size();
        EXPECT_NE(line.find(what), std::string::npos) << line;
        return;
      }
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no reload logged: " << log_tail();
  }
  std::string log_tail() {
    std::string log = d_->log();
    return log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
  }
  std::vector<std::string> advertised_handlers() {
    v1::StatusResponse st;
    EXPECT_TRUE(cri_->status(&st, false).ok());
    std::vector<std::string> out;
    for (const auto& h : st.runtime_handlers()) out.push_back(h.name());
    return out;
  }
  size_t mark_ = 0;
};

// The GPU operators' flow, then the handler removed again while its pod runs.
TEST_F(ReloadWithPods, AHandlerAddedByADropInRunsPodsAndRemovedStillStopsThem) {
  TempDir bin("berth-handler");
  const std::string calls = bin / "calls";
  // A runtime as vendors ship them: a wrapper that does its part, then execs runc.
  write_file(bin / "vendor-runtime",
             "#!/bin/sh\nfor a; do case \"$a\" in create|run|delete|start) echo \"$a\" >> " + calls +
                 ";; esac; done\nexec runc \"$@\"\n",
             0755);
  auto& cri = ready("pod", {.config_toml = "shutdown_timeout_seconds = 5\n"});
  std::string refused_id;
  grpc::Status refused = cri.run_pod(test_pod("gpu-pod"), &refused_id, "vendor");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("runtime_handler: unknown handler 'vendor'"), std::string::npos)
      << refused.error_message();

  reload_with("50-vendor.toml", "[runtimes.vendor]\npath = \"" + (bin / "vendor-runtime") + "\"\n", "applied runtimes");
  EXPECT_NE(d_->log().find("runtime handler vendor (" + (bin / "vendor-runtime") + ")"), std::string::npos)
      << log_tail();
  auto handlers = advertised_handlers();
  EXPECT_NE(std::find(handlers.begin(), handlers.end(), "vendor"), handlers.end());
  auto config = test_pod("gpu-pod");
  config.set_log_directory(logs_->path());
  std::string pod_id;
  ASSERT_OK(cri.run_pod(config, &pod_id, "vendor"));
  std::string id;
  ASSERT_OK(cri.create_container(pod_id, shell_container("gpu", "sleep 100000"), &id, config));
  ASSERT_OK(cri.start_container(id));
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
  EXPECT_NE(read_file(calls).find("run"), std::string::npos) << read_file(calls);
  v1::PodSandboxStatusResponse pod;
  ASSERT_OK(cri.pod_status(pod_id, &pod, false));
  EXPECT_EQ(pod.status().runtime_handler(), "vendor");

  // Removed with its pod running: the pod runs on, new pods cannot ask for it, and what it made
  // is stopped and removed through it.
  reload_with("50-vendor.toml", "", "applied runtimes");
  EXPECT_NE(d_->log().find("runtime handler vendor removed"), std::string::npos) << log_tail();
  handlers = advertised_handlers();
  EXPECT_EQ(std::find(handlers.begin(), handlers.end(), "vendor"), handlers.end());
  EXPECT_EQ(cri.run_pod(test_pod("late"), &refused_id, "vendor").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status(id).state(), v1::CONTAINER_RUNNING);
  ASSERT_OK(cri.stop_container(id, 0));
  ASSERT_OK(cri.remove_container(id));
  ASSERT_OK(cri.stop_pod(pod_id));
  ASSERT_OK(cri.remove_pod(pod_id));
  EXPECT_FALSE(fs::exists(d_->state() + "/runtime/vendor/" + id)) << "the handler's state of the container is left";
  EXPECT_TRUE(fs::is_empty(d_->state() + "/runtime/vendor"));
}

// default_runtime and a handler's root: the first applies to the next pod that names no handler,
// the second waits for a restart (the handler's containers live under its old root).
TEST_F(ReloadWithPods, TheDefaultHandlerChangesAndAHandlersRootWaitsForARestart) {
  TempDir bin("berth-handler");
  const std::string calls = bin / "calls";
  write_file(
      bin / "vendor-runtime",
      "#!/bin/sh\nfor a; do case \"$a\" in create|run) echo \"$a\" >> " + calls + ";; esac; done\nexec runc \"$@\"\n",
      0755);
  ready("pod", {.config_toml = "[runtimes.vendor]\npath = \"" + (bin / "vendor-runtime") + "\"\n"});
  reload_with("50-default.toml",
              "default_runtime = \"vendor\"\n[runtimes.vendor]\npath = \"" + (bin / "vendor-runtime") +
                  "\"\nroot = \"" + (bin / "elsewhere") + "\"\n",
              "applied default_runtime, runtimes");
  EXPECT_NE(d_->log().find("config: key runtimes.vendor.root changed; it takes effect at the next restart"),
            std::string::npos)
      << log_tail();
  auto config = test_pod("defaulted");
  config.set_log_directory(logs_->path());
  std::string pod_id;
  ASSERT_OK(cri_->run_pod(config, &pod_id));
  v1::PodSandboxStatusResponse pod;
  ASSERT_OK(cri_->pod_status(pod_id, &pod, false));
  EXPECT_EQ(pod.status().runtime_handler(), "vendor");
  std::string id;
  ASSERT_OK(cri_->create_container(pod_id, shell_container("c", "sleep 100000"), &id, config));
  ASSERT_OK(cri_->start_container(id));
  EXPECT_NE(read_file(calls).find("run"), std::string::npos);
  EXPECT_FALSE(fs::exists(bin / "elsewhere")) << "the running root changed";
  ASSERT_OK(cri_->remove_pod(pod_id));
}

// cdi_spec_dirs and default_ulimits apply to the containers created after the reload; a running
// container keeps what it started with.
TEST_F(ReloadWithPods, CdiDirsAndDefaultUlimitsApplyToTheNextContainers) {
  TempDir specs("berth-cdi");
  write_file(
      specs / "reloaded.json",
      R"({"cdiVersion":"0.6.0","kind":"reload.example/dev","devices":[{"name":"x","containerEdits":{"env":["RELOADED_DEV=1"]}}]})");
  auto& cri = ready();
  std::string before = run(shell_container("before", "sleep 100000"));
  auto with_device = shell_container("cdi", "sleep 100000");
  with_device.add_cdi_devices()->set_name("reload.example/dev=x");
  std::string id;
  EXPECT_EQ(cri.create_container(pod_, with_device, &id, pod_config_).error_code(), grpc::StatusCode::NOT_FOUND);

  reload_with("50-node.toml",
              "cdi_spec_dirs = [\"" + specs.path() + "\"]\n[default_ulimits]\nnofile = { soft = 4321, hard = 8765 }\n",
              "applied cdi_spec_dirs, default_ulimits");
  std::string after = run(with_device);
  EXPECT_EQ(exec_out(after, {"/bin/sh", "-c", "echo $RELOADED_DEV"}), "1\n");
  EXPECT_EQ(exec_out(after, {"/bin/sh", "-c", "ulimit -Sn; ulimit -Hn"}), "4321\n8765\n");
  auto [soft, hard] = default_container_nofile();
  EXPECT_EQ(exec_out(before, {"/bin/sh", "-c", "ulimit -Sn; ulimit -Hn"}),
            std::to_string(soft) + "\n" + std::to_string(hard) + "\n");
}

// pinned_images: an image listed there is reported pinned and RemoveImage refuses it, naming the
// entry; a reload that takes the entry out unpins it.
TEST_F(ReloadWithPods, PinnedImagesAreSparedUntilAReloadTakesThemOut) {
  auto& cri = ready("pod", {.config_toml = "pinned_images = [\"" + image() + "\"]\n"});
  auto pinned = [&] {
    v1::ImageStatusResponse st;
    grpc::ClientContext ctx;
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(image());
    EXPECT_TRUE(d_->images()->ImageStatus(&ctx, req, &st).ok());
    return st.image().pinned();
  };
  EXPECT_TRUE(pinned());
  grpc::Status refused = cri.remove_image(image());
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("pinned by pinned_images entry \"" + image() + "\""), std::string::npos)
      << refused.error_message();
  reload_with("50-unpin.toml", "pinned_images = []\n", "applied pinned_images");
  EXPECT_FALSE(pinned());
  for (const auto& c : cri.list_containers()) ASSERT_OK(cri.remove_container(c.id()));
  ASSERT_OK(cri.remove_pod(pod_));
  ASSERT_OK(cri.remove_image(image()));
}

}  // namespace
}  // namespace berth::test
