// GetContainerEvents as a stream: open streams end cleanly when the client cancels and when
// berthd shuts down (the drain is not held up by them). Event content is tested with containers.
#include <gtest/gtest.h>

#include <thread>

#include "berth/test/daemon_process.h"

namespace berth::test {
namespace {

namespace v1 = runtime::v1;

TEST(ContainerEvents, StreamEndsOnClientCancel) {
  DaemonProcess d;
  ASSERT_TRUE(d.start()) << d.log();
  auto rt = d.runtime();
  grpc::ClientContext ctx;
  auto reader = rt->GetContainerEvents(&ctx, v1::GetEventsRequest());
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ctx.TryCancel();
  });
  v1::ContainerEventResponse ev;
  EXPECT_FALSE(reader->Read(&ev));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  canceller.join();
  // The daemon keeps serving other calls.
  grpc::ClientContext vctx;
  v1::VersionResponse vr;
  EXPECT_TRUE(rt->Version(&vctx, v1::VersionRequest(), &vr).ok());
}

TEST(ContainerEvents, OpenStreamsDoNotHoldUpShutdown) {
  DaemonProcess d({.config_toml = "shutdown_timeout_seconds = 120\n"});
  ASSERT_TRUE(d.start()) << d.log();
  auto rt = d.runtime();
  grpc::ClientContext a, b;
  auto ra = rt->GetContainerEvents(&a, v1::GetEventsRequest());
  auto rb = rt->GetContainerEvents(&b, v1::GetEventsRequest());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both streams are open
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
  // Well under the 120 s drain bound: the streams were ended, not waited out. (gRPC's graceful
  // GOAWAY waits for this idle test client's ping answer, which its transport sends on a 5 s timer
  // per channel; a live client such as kubelet answers at once.)
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  v1::ContainerEventResponse ev;
  EXPECT_FALSE(ra->Read(&ev));
  EXPECT_FALSE(rb->Read(&ev));
  EXPECT_TRUE(ra->Finish().ok());
}

}  // namespace
}  // namespace berth::test
