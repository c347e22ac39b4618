// One GetContainerEvents stream of a test daemon, read on a thread of its own (or not read at all),
// on a channel of its own: a separate connection, as each kubelet is.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "berth/cri_messages.h"
#include "berth/test/daemon_process.h"

namespace berth::test {

class EventStream {
 public:
  // Returns once subscribed: events of any change after it reach this stream.
  EventStream(DaemonProcess& d, bool read);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // Reads everything left, for a stream that was not read before; returns how the stream ended.
  grpc::Status drain();
  // The events about `id` received so far, once `n` of them arrived (or the timeout passed).
  std::vector<runtime::v1::ContainerEventResponse> about(const std::string& id, size_t n,
                                                         std::chrono::seconds timeout = std::chrono::seconds(20));
  // Every event received so far, in the order of the stream.
  std::vector<runtime::v1::ContainerEventResponse> all();

 private:
  void read_all();

  std::unique_ptr<runtime::v1::RuntimeService::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<runtime::v1::ContainerEventResponse>> reader_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<runtime::v1::ContainerEventResponse> events_;
  bool ended_ = false;
  grpc::Status status_;
};

// The status of container `id` among those an event carries; null when it is not among them.
const runtime::v1::ContainerStatus* status_of(const runtime::v1::ContainerEventResponse& ev, const std::string& id);

}  // namespace berth::test
