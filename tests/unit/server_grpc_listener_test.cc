// The gRPC listener on a unix socket: it serves (here the generated RuntimeService, every rpc
// UNIMPLEMENTED), its socket is 0660 whatever the umask, and a path it cannot listen on is an
// error naming it.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "../../server/grpc_listener.h"
#include "berth/cri_api.h"
#include "berth/test/temp_dir.h"

namespace berth {
namespace {

TEST(GrpcListener, ServesOnASocketOfMode0660) {
  test::TempDir dir;
  const std::string socket = dir / "berth.sock";
  mode_t old = ::umask(0);  // the listener's own umask decides, not the caller's
  runtime::v1::RuntimeService::Service service;
  auto server = start_grpc_listener({.socket = socket, .max_concurrent_rpcs = 4, .services = {&service}});
  ::umask(old);
  ASSERT_TRUE(server.ok()) << server.status().message();
  struct stat st {};
  ASSERT_EQ(::stat(socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  auto stub =
      runtime::v1::RuntimeService::NewStub(grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));  // a bound, not a timing check
  runtime::v1::VersionRequest req;
  runtime::v1::VersionResponse resp;
  EXPECT_EQ(stub->Version(&ctx, req, &resp).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  (*server)->Shutdown();
}

TEST(GrpcListener, APathItCannotListenOnIsAnError) {
  test::TempDir dir;
  runtime::v1::RuntimeService::Service service;
  auto server =
      start_grpc_listener({.socket = dir / "missing-dir/berth.sock", .max_concurrent_rpcs = 4, .services = {&service}});
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("missing-dir/berth.sock"), std::string::npos) << server.status().message();
}

}  // namespace
}  // namespace berth
