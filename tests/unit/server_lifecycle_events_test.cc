// LifecycleEvents without a daemon: the two managers opened on temp dirs (no pod, no runtime
// run), and a subscriber of the hub. Nothing is published before connect() or after
// disconnect(); in between every change is, synchronously, with the statuses that exist.
#include <gtest/gtest.h>

#include "../../server/lifecycle_events.h"
#include "berth/image_manager.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

namespace v1 = runtime::v1;

// No image and no pod: the managers only recover (nothing) here.
class NoImages : public ContainerImages {
 public:
  Result<ImageHold> acquire(const std::string& reference) override { return not_found("no image " + reference); }
  std::vector<std::string> snapshot_dirs(const ImageRecord&) override { return {}; }
  std::optional<ImageRecord> find(const std::string&) override { return std::nullopt; }
  void hold(const std::string&) override {}
  void release(const std::string&) override {}
};

class NoPods : public ContainerPods {
 public:
  Result<SandboxLease> lease(const std::string& id) override { return not_found("no pod " + id); }
  std::optional<SandboxInfo> info(const std::string&) override { return std::nullopt; }
};

class LifecycleEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s =
        SandboxManager::open({.state_dir = state_ / "state", .root_dir = root_ / "root", .pause_binary = "/bin/true"});
    ASSERT_TRUE(s.ok()) << s.status().message();
    sandboxes_ = std::move(*s);
    auto c = ContainerManager::open(
        {.state_dir = state_ / "state", .root_dir = root_ / "root", .images = &images_, .pods = &pods_});
    ASSERT_TRUE(c.ok()) << c.status().message();
    containers_ = std::move(*c);
  }

  // What the subscriber has now: publication is synchronous, so no wait is needed.
  std::vector<v1::ContainerEventResponse> received() {
    std::vector<v1::ContainerEventResponse> out;
    while (auto ev = subscription_->next(std::chrono::milliseconds(0))) out.push_back(*ev);
    return out;
  }

  test::TempDir state_, root_;
  NoImages images_;
  NoPods pods_;
  std::unique_ptr<SandboxManager> sandboxes_;
  std::unique_ptr<ContainerManager> containers_;
  EventHub<v1::ContainerEventResponse> hub_{16};
  std::unique_ptr<EventHub<v1::ContainerEventResponse>::Subscription> subscription_ = hub_.subscribe();
  LifecycleEvents events_{hub_};
};

TEST_F(LifecycleEventsTest, NothingIsPublishedBeforeConnect) {
  events_.sandbox_changed(std::string(64, 'a'), v1::CONTAINER_CREATED_EVENT);
  events_.container_changed(std::string(64, 'b'), std::string(64, 'a'), v1::CONTAINER_STARTED_EVENT);
  EXPECT_TRUE(received().empty());
}

TEST_F(LifecycleEventsTest, ConnectedEachChangeIsPublishedAndDisconnectedNone) {
  events_.connect(*sandboxes_, *containers_);
  const std::string pod(64, 'a'), ctr(64, 'b');
  events_.sandbox_changed(pod, v1::CONTAINER_CREATED_EVENT);
  events_.container_changed(ctr, pod, v1::CONTAINER_DELETED_EVENT);
  events_.sandbox_changed(pod, v1::CONTAINER_DELETED_EVENT, false);
  auto got = received();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].container_id(), pod);  // a sandbox event carries the sandbox id as container id
  EXPECT_EQ(got[0].container_event_type(), v1::CONTAINER_CREATED_EVENT);
  EXPECT_EQ(got[1].container_id(), ctr);
  EXPECT_EQ(got[1].container_event_type(), v1::CONTAINER_DELETED_EVENT);
  for (const auto& ev : got) {
    // A pod neither manager knows has no status to carry; the event still goes out.
    EXPECT_FALSE(ev.has_pod_sandbox_status());
    EXPECT_EQ(ev.containers_statuses_size(), 0);
    EXPECT_GT(ev.created_at(), 0);
  }

  events_.disconnect();
  events_.sandbox_changed(pod, v1::CONTAINER_STOPPED_EVENT);
  EXPECT_TRUE(received().empty());
}

}  // namespace
}  // namespace berth
