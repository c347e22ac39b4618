// The installed package runs a pod: tests/package/deb-test runs this with $BERTHD naming a wrapper
// that execs the packaged /usr/bin/berthd inside the Debian root it installed the package into, so
// berthd, its helpers (berth-pull with the libcurl and libarchive apt installed, berth-monitor,
// berth-pause, berth-exec), runc and the CNI plugins all come from that root. Skipped without
// $BERTHD (it is not a ctest test of its own).
#include <cstdlib>

#include "pod_fixture.h"

namespace berth::test {
namespace {

class InstalledPackage : public PodFixture {
 protected:
  void SetUp() override {
    const char* berthd = std::getenv("BERTHD");
    if (!berthd || !*berthd) GTEST_SKIP() << "run by tests/package/deb-test, with $BERTHD";
    PodFixture::SetUp();
  }
};

TEST_F(InstalledPackage, RunsAPodWhoseContainerLogs) {
  CriClient& cri = ready("package-pod");
  ASSERT_FALSE(pod_.empty()) << d_->log();
  std::string once = run(shell_container("hello", "echo hello from the installed berth"));
  EXPECT_EQ(wait_exited(once).exit_code(), 0);
  EXPECT_TRUE(wait_for_file_text(logs_->path() + "/hello.log", "hello from the installed berth")) << log_of("hello");
  std::string sleeper = run(shell_container("sleeper", "sleep 600"));
  EXPECT_EQ(exec_out(sleeper, {"echo", "exec works"}), "exec works\n");
  ASSERT_OK(cri.stop_container(sleeper, 0));
  for (const auto& id : {once, sleeper}) ASSERT_OK(cri.remove_container(id));
  ASSERT_OK(cri.stop_pod(pod_));
  ASSERT_OK(cri.remove_pod(pod_));
  EXPECT_TRUE(cri.list_pods().empty());
}

}  // namespace
}  // namespace berth::test
