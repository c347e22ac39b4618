// The wall clock set forward and back by an hour under a running berthd (as NTP's step or an
// operator's `date` does), made for real with clock_settime: only inside tests/vm's guest
// (BERTH_VM_WORK set), never on the host, whose clock other processes depend on. ExecSync's
// timeout, StopContainer's grace, a streaming URL's lifetime and the cpu rate of the stats run on
// the monotonic clock: nothing ends early, nothing waits for the hour, no rate goes missing.
#include <time.h>

#include <future>

#include "berth/test/streaming_client.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

using Steady = std::chrono::steady_clock;

// Sets the wall clock `by` away from where it would be, and puts it back (by the monotonic time
// that passed) when it goes.
// Sets the wall clock `by` away from where it would be, and puts it back (by the monotonic time
// that passed) when it goes; a shift never set touches nothing.
class WallClockShift {
 public:
  WallClockShift() : real_(now_real()), steady_(Steady::now()) {}
  ~WallClockShift() {
    if (shifted_) set(std::chrono::nanoseconds(0));
  }
  void set(std::chrono::nanoseconds by) {
    ASSERT_NE(::getenv("BERTH_VM_WORK"), nullptr) << "the host's clock is not the test's to set";
    auto target = real_ + std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now() - steady_) + by;
    timespec ts{static_cast<time_t>(target.count() / 1'000'000'000), static_cast<long>(target.count() % 1'000'000'000)};
    EXPECT_EQ(::clock_settime(CLOCK_REALTIME, &ts), 0) << strerror(errno);
    shifted_ = by.count() != 0;
  }

 private:
  static std::chrono::nanoseconds now_real() {
    timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }
  std::chrono::nanoseconds real_;
  Steady::time_point steady_;
  bool shifted_ = false;
};

constexpr auto kHour = std::chrono::hours(1);

class ClockJumps : public PodFixture {
 protected:
  void SetUp() override {
    if (!::getenv("BERTH_VM_WORK")) GTEST_SKIP() << "sets the wall clock: only in tests/vm's guest";
    PodFixture::SetUp();
    ready();
  }
  double seconds_since(Steady::time_point t) { return std::chrono::duration<double>(Steady::now() - t).count(); }
  v1::ContainerStats stats(const std::string& id) {
    v1::ContainerStatsResponse resp;
    grpc::Status s = cri_->container_stats(id, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.stats();
  }
  // The next sample after `after` (the stats answer from a background sample a few seconds old).
  v1::ContainerStats next_sample(const std::string& id, int64_t after) {
    for (auto deadline = Steady::now() + 60s; Steady::now() < deadline; std::this_thread::sleep_for(200ms)) {
      auto s = stats(id);
      if (s.cpu().timestamp() != after) return s;
    }
    ADD_FAILURE() << "no new stats sample in 60 s";
    return {};
  }

  WallClockShift clock_;
};

TEST_F(ClockJumps, ExecSyncTimesOutNeitherEarlyNorNever) {
  std::string id = run(shell_container("sleeper", "sleep 100000"));
  for (auto by : {std::chrono::nanoseconds(kHour), -std::chrono::nanoseconds(kHour)}) {
    auto started = Steady::now();
    auto jump = std::async(std::launch::async, [&] {
      std::this_thread::sleep_for(1s);
      clock_.set(by);
    });
    v1::ExecSyncResponse r;
    grpc::Status s = cri_->exec_sync(id, {"sleep", "60"}, &r, 4);
    jump.get();
    double took = seconds_since(started);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
    EXPECT_GE(took, 3.5);
    EXPECT_LT(took, 45.0);
    clock_.set(std::chrono::nanoseconds(0));
  }
}

TEST_F(ClockJumps, StopWaitsItsGraceWhateverTheWallClockDoes) {
  std::string id = run(shell_container("deaf", "trap '' TERM; while :; do sleep 0.1; done"));
  auto started = Steady::now();
  auto jump = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(1s);
    clock_.set(-std::chrono::nanoseconds(kHour));
  });
  ASSERT_OK(cri_->stop_container(id, 4));
  jump.get();
  double took = seconds_since(started);
  EXPECT_GE(took, 3.5);
  EXPECT_LT(took, 45.0);
  EXPECT_EQ(status(id).exit_code(), 137);
}

TEST_F(ClockJumps, AStreamingUrlOutlivesAJumpForward) {
  std::string id = run(shell_container("sleeper", "sleep 100000"));
  std::string url = exec_url(id, {"echo", "still here"}, false, true, false);
  clock_.set(std::chrono::nanoseconds(kHour));
  auto r = run_command(url, StreamOptions{.stdout = true, .stderr = false});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "still here\n");
}

TEST_F(ClockJumps, CpuRatesStayRightAcrossJumps) {
  std::string id = run(shell_container("busy", "while :; do :; done"));
  auto s = next_sample(id, 0);
  for (auto by : {-std::chrono::nanoseconds(kHour), std::chrono::nanoseconds(kHour)}) {
    clock_.set(by);
    s = next_sample(id, s.cpu().timestamp());
    ASSERT_TRUE(s.cpu().has_usage_nano_cores()) << "no rate after the wall clock moved";
    // A busy loop on one core (the guest is emulated: somewhat less), never an hour's average.
    EXPECT_GT(s.cpu().usage_nano_cores().value(), 200'000'000u);
    EXPECT_LT(s.cpu().usage_nano_cores().value(), 2'500'000'000u);
  }
}

}  // namespace
}  // namespace berth::test
