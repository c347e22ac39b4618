// A GetContainerEvents subscriber for tests: a channel of its own and a reader thread.
#include "berth/test/event_stream.h"

namespace berth::test {

namespace v1 = runtime::v1;

EventStream::EventStream(DaemonProcess& d, bool read) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  stub_ = v1::RuntimeService::NewStub(
      grpc::CreateCustomChannel("unix:" + d.socket(), grpc::InsecureChannelCredentials(), args));
  ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(180));  // a failing test never hangs
  reader_ = stub_->GetContainerEvents(&ctx_, v1::GetEventsRequest());
  reader_->WaitForInitialMetadata();  // subscribed: berthd sends it after subscribing
  if (read) thread_ = std::thread([this] { read_all(); });
}

EventStream::~EventStream() {
  ctx_.TryCancel();
  if (thread_.joinable()) thread_.join();
}

grpc::Status EventStream::drain() {
  read_all();
  return status_;
}

std::vector<v1::ContainerEventResponse> EventStream::about(const std::string& id, size_t n,
                                                           std::chrono::seconds timeout) {
  std::unique_lock lock(mu_);
  std::vector<v1::ContainerEventResponse> out;
  cv_.wait_for(lock, timeout, [&] {
    out.clear();
    for (const auto& e : events_)
      if (e.container_id() == id) out.push_back(e);
    return out.size() >= n || ended_;
  });
  return out;
}

std::vector<v1::ContainerEventResponse> EventStream::all() {
  std::lock_guard lock(mu_);
  return events_;
}

void EventStream::read_all() {
  v1::ContainerEventResponse ev;
  while (reader_->Read(&ev)) {
    // Big annotations are dropped: a test may send many large events.
    for (auto& cs : *ev.mutable_containers_statuses()) cs.clear_annotations();
    std::lock_guard lock(mu_);
    events_.push_back(ev);
    cv_.notify_all();
  }
  grpc::Status s = reader_->Finish();
  std::lock_guard lock(mu_);
  status_ = s;
  ended_ = true;
  cv_.notify_all();
}

const v1::ContainerStatus* status_of(const v1::ContainerEventResponse& ev, const std::string& id) {
  for (const auto& s : ev.containers_statuses())
    if (s.id() == id) return &s;
  return nullptr;
}

}  // namespace berth::test
