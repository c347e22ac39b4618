// RPCs that no issue has built yet: each answers UNIMPLEMENTED naming itself.
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::CheckpointContainer(grpc::ServerContext*, const v1::CheckpointContainerRequest*,
                                                     v1::CheckpointContainerResponse*) {
  return unimplemented_rpc("CheckpointContainer");
}

}  // namespace berth
