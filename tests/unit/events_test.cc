// EventHub: ordered delivery to several subscribers, and a subscriber that never reads is dropped
// without blocking the publisher or keeping its backlog.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "berth/event_hub.h"

namespace berth {
namespace {

using namespace std::chrono_literals;

TEST(EventHub, TwoSubscribersGetEveryEventInOrder) {
  EventHub<int> hub(100);
  auto a = hub.subscribe();
  auto b = hub.subscribe();
  std::thread publisher([&] {
    for (int i = 0; i < 50; ++i) hub.publish(i);
  });
  for (auto* s : {a.get(), b.get()}) {
    for (int i = 0; i < 50; ++i) {
      auto e = s->next(2s);
      ASSERT_TRUE(e.has_value()) << "event " << i;
      EXPECT_EQ(*e, i);
    }
  }
  publisher.join();
  EXPECT_FALSE(a->next(10ms).has_value());
}

TEST(EventHub, SubscriberThatNeverReadsIsDroppedAndOthersContinue) {
  std::atomic<uint64_t> dropped_id{0};
  EventHub<std::string> hub(8, [&](uint64_t id) { dropped_id = id; });
  auto idle = hub.subscribe();
  auto reader = hub.subscribe();
  for (int i = 0; i < 20; ++i) {
    hub.publish("event " + std::to_string(i));  // never blocks, even though `idle` is full
    auto e = reader->next(1s);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(*e, "event " + std::to_string(i));
  }
  EXPECT_TRUE(idle->dropped());
  EXPECT_TRUE(idle->ended());
  EXPECT_EQ(dropped_id.load(), idle->id());
  EXPECT_FALSE(idle->next(10ms).has_value());
  EXPECT_FALSE(reader->dropped());
  EXPECT_EQ(hub.subscriber_count(), 1u);
}

TEST(EventHub, UnsubscribeOnDestructionAndCloseWakesReaders) {
  EventHub<int> hub(4);
  {
    auto s = hub.subscribe();
    EXPECT_EQ(hub.subscriber_count(), 1u);
  }
  EXPECT_EQ(hub.subscriber_count(), 0u);
  auto s = hub.subscribe();
  std::thread closer([&] {
    std::this_thread::sleep_for(50ms);
    hub.close();
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(s->next(10s).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(s->ended());
  closer.join();
}

}  // namespace
}  // namespace berth
