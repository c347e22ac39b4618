// The streaming server's view of berth: exec through the container manager (the runtime's exec),
// attach through the container's monitor, and port connections inside the pod's netns.
#pragma once

#include "berth/container_manager.h"
#include "berth/sandbox_manager.h"
#include "berth/streaming_backend.h"

namespace berth {

class RuntimeStreamingBackend final : public StreamingBackend {
 public:
  RuntimeStreamingBackend(ContainerManager& containers, SandboxManager& sandboxes)
      : containers_(containers), sandboxes_(sandboxes) {}
  Result<StreamIo> exec(const ExecTarget& target) override;
  Result<StreamIo> attach(const AttachTarget& target) override;
  Result<UniqueFd> connect_port(const std::string& sandbox_id, int32_t port) override;

 private:
  ContainerManager& containers_;
  SandboxManager& sandboxes_;
};

}  // namespace berth
