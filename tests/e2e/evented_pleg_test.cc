// kubelet's Evented PLEG against a real berthd: it follows GetContainerEvents and keeps, per pod,
// whichever status is newer by its timestamp (an event's created_at, a PodSandboxStatus's
// timestamp). So each transition must come once, in order, carrying the statuses after it, and
// PodSandboxStatus must carry the containers' statuses and the moment they were read.
#include <gtest/gtest.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <string>
#include <vector>

#include "berth/test/event_stream.h"
#include "berth/wall_clock.h"
#include "pod_fixture.h"

namespace berth::test {
namespace {

// The messages are lite: compared by their deterministic encoding (map entries in key order).
std::string canonical(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

bool same(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b) {
  return canonical(a) == canonical(b);
}

std::string summary(const v1::ContainerStatus& s) {
  return s.id().substr(0, 12) + " state " + std::to_string(s.state()) + " created " + std::to_string(s.created_at()) +
         " started " + std::to_string(s.started_at()) + " finished " + std::to_string(s.finished_at()) + " exit " +
         std::to_string(s.exit_code()) + " reason '" + s.reason() + "'\n";
}

class EventedPleg : public PodFixture {
 protected:
  v1::PodSandboxStatusResponse pod_status() {
    v1::PodSandboxStatusResponse r;
    grpc::Status s = cri_->pod_status(pod_, &r, false);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }
  static v1::ContainerStatus without_annotations(v1::ContainerStatus s) {
    s.clear_annotations();
    return s;
  }
  // The latest event about `id` is its `n`th and of `type`; the statuses it carries are those
  // ContainerStatus and PodSandboxStatus answer now (nothing changed since), and a relist now is
  // stamped no earlier than the event.
  void expect_event(EventStream& events, const std::string& id, size_t n, v1::ContainerEventType type) {
    auto evs = events.about(id, n);
    ASSERT_EQ(evs.size(), n) << id;
    const v1::ContainerEventResponse& ev = evs.back();
    EXPECT_EQ(ev.container_event_type(), type) << id << " event " << n;
    v1::PodSandboxStatusResponse now = pod_status();
    EXPECT_GE(now.timestamp(), ev.created_at());
    EXPECT_LE(now.timestamp(), wall_clock_ns());
    EXPECT_TRUE(same(ev.pod_sandbox_status(), now.status())) << "pod state " << ev.pod_sandbox_status().state();
    ASSERT_EQ(ev.containers_statuses_size(), now.containers_statuses_size()) << id << " event " << n;
    for (const auto& in_relist : now.containers_statuses()) {
      const v1::ContainerStatus* in_event = status_of(ev, in_relist.id());
      ASSERT_NE(in_event, nullptr) << in_relist.id();
      v1::ContainerStatus alone = status(in_relist.id());
      EXPECT_TRUE(same(without_annotations(*in_event), without_annotations(alone)))
          << "event " << n << " about " << id << " has\n"
          << summary(*in_event) << "ContainerStatus has\n"
          << summary(alone);
      EXPECT_TRUE(same(without_annotations(in_relist), without_annotations(alone))) << summary(in_relist);
    }
  }
};

TEST_F(EventedPleg, EachTransitionOnceInOrderWithTheStatusesOfItsMoment) {
  auto& cri = ready();
  EventStream events(*d_, true);
  // Two that run until stopped, one that exits with 3 when told (a file in its own rootfs).
  const std::map<std::string, std::string> scripts = {{"a", "sleep 100000"},
                                                      {"b", "trap 'exit 0' TERM; while true; do sleep 0.1; done"},
                                                      {"c", "while [ ! -e /go ]; do sleep 0.05; done; exit 3"}};
  std::map<std::string, std::string> ids;
  for (const auto& [name, script] : scripts) {
    ASSERT_OK(cri.create_container(pod_, shell_container(name, script), &ids[name], pod_config_));
    expect_event(events, ids[name], 1, v1::CONTAINER_CREATED_EVENT);
  }
  for (const auto& [name, id] : ids) {
    ASSERT_OK(cri.start_container(id));
    expect_event(events, id, 2, v1::CONTAINER_STARTED_EVENT);
  }
  v1::ExecSyncResponse r;
  ASSERT_OK(cri.exec_sync(ids["c"], {"touch", "/go"}, &r, 10));
  expect_event(events, ids["c"], 3, v1::CONTAINER_STOPPED_EVENT);
  EXPECT_EQ(status(ids["c"]).exit_code(), 3);
  for (const char* name : {"a", "b"}) {
    ASSERT_OK(cri.stop_container(ids[name], 0));
    expect_event(events, ids[name], 3, v1::CONTAINER_STOPPED_EVENT);
  }
  for (const auto& [name, id] : ids) {
    ASSERT_OK(cri.remove_container(id));
    expect_event(events, id, 4, v1::CONTAINER_DELETED_EVENT);
    EXPECT_EQ(status_of(events.about(id, 4).back(), id), nullptr);
  }
  ASSERT_OK(cri.stop_pod(pod_));
  expect_event(events, pod_, 1, v1::CONTAINER_STOPPED_EVENT);
  EXPECT_EQ(events.about(pod_, 1).back().pod_sandbox_status().state(), v1::SANDBOX_NOTREADY);

  // Once each: no event repeated or arriving late, and the stream's stamps never go back.
  std::this_thread::sleep_for(500ms);
  std::map<std::string, size_t> count;
  int64_t last = 0;
  for (const auto& ev : events.all()) {
    ++count[ev.container_id()];
    EXPECT_GE(ev.created_at(), last);
    last = ev.created_at();
  }
  for (const auto& [name, id] : ids) EXPECT_EQ(count[id], 4u) << name;
  EXPECT_EQ(count[pod_], 1u);
}

}  // namespace
}  // namespace berth::test
