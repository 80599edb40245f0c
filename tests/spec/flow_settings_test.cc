// spec/flow_settings.h: Q and T read off a client's own Flows, and a given Q its first Flow
// contradicts.
#include "spec/flow_settings.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

Id c(const char* name) { return Id::text(name); }

std::vector<Event> subscribed_with_flows(std::vector<std::int64_t> flows) {
  std::vector<Event> ev = {Connect{.cnx = c("c1")}, Subscribe{.cnx = c("c1"), .consumer = 0},
                           SubscribeOk{.cnx = c("c1"), .consumer = 0}};
  for (std::int64_t n : flows) ev.push_back(Flow{.cnx = c("c1"), .consumer = 0, .permits = n});
  return ev;
}

TEST(FlowSettingsSeen, QIsTheFirstFlowAndTTheSmallestReplenishingOne) {
  const FlowSettingsSeen seen = flow_settings_seen(subscribed_with_flows({1000, 502, 500, 503}));
  EXPECT_EQ(seen.q, 1000);
  EXPECT_EQ(seen.t, 500);
  EXPECT_EQ(seen.replenishing_flows, 3);
}

TEST(FlowSettingsSeen, NoFlowsShowNothing) {
  const FlowSettingsSeen none = flow_settings_seen(subscribed_with_flows({}));
  EXPECT_FALSE(none.q.has_value());
  EXPECT_FALSE(none.t.has_value());
  const FlowSettingsSeen only_initial = flow_settings_seen(subscribed_with_flows({10}));
  EXPECT_EQ(only_initial.q, 10);
  EXPECT_FALSE(only_initial.t.has_value());
}

// A replacement's initial Flow (after a close or a reconnect) is an initial grant, not a
// replenishing Flow; Q stays the first consumer's.
TEST(FlowSettingsSeen, AReplacementsInitialFlowIsNotAReplenishingOne) {
  std::vector<Event> ev = subscribed_with_flows({10, 5});
  ev.push_back(CloseConsumer{.cnx = c("c1"), .consumer = 0});
  ev.push_back(Subscribe{.cnx = c("c1"), .consumer = 0});
  ev.push_back(Flow{.cnx = c("c1"), .consumer = 0, .permits = 7});
  ev.push_back(Disconnect{.cnx = c("c1")});
  ev.push_back(Connect{.cnx = c("c2")});
  ev.push_back(Subscribe{.cnx = c("c2"), .consumer = 1});
  ev.push_back(Flow{.cnx = c("c2"), .consumer = 1, .permits = 3});
  ev.push_back(Flow{.cnx = c("c2"), .consumer = 1, .permits = 6});
  const FlowSettingsSeen seen = flow_settings_seen(ev);
  EXPECT_EQ(seen.q, 10);
  EXPECT_EQ(seen.t, 5);
  EXPECT_EQ(seen.replenishing_flows, 2);
}

// A Flow of a consumer that is not live (closed, or never subscribed in the trace) says
// nothing of the client's settings.
TEST(FlowSettingsSeen, FlowsOfConsumersNotLiveAreIgnored) {
  std::vector<Event> ev = {Flow{.cnx = c("c9"), .consumer = 4, .permits = 1}};
  for (const Event& e : subscribed_with_flows({10})) ev.push_back(e);
  ev.push_back(CloseConsumer{.cnx = c("c1"), .consumer = 0});
  ev.push_back(Flow{.cnx = c("c1"), .consumer = 0, .permits = 2});
  const FlowSettingsSeen seen = flow_settings_seen(ev);
  EXPECT_EQ(seen.q, 10);
  EXPECT_FALSE(seen.t.has_value());
}

// A Flow of no permits grants nothing: neither a receiver queue size nor a threshold (a hostile
// client's burst of Flow 0).
TEST(FlowSettingsSeen, AFlowOfNoPermitsIsNeitherQNorT) {
  const FlowSettingsSeen seen = flow_settings_seen(subscribed_with_flows({0, 10, 0, 0, 4}));
  EXPECT_EQ(seen.q, 10);
  EXPECT_EQ(seen.t, 4);
  EXPECT_EQ(seen.replenishing_flows, 1);
}

TEST(QMismatch, NamesBothNumbersWhenTheFirstFlowDiffers) {
  const FlowSettingsSeen seen = flow_settings_seen(subscribed_with_flows({1000}));
  const std::optional<std::string> m = q_mismatch(seen, 10);
  ASSERT_TRUE(m.has_value());
  EXPECT_THAT(*m, HasSubstr("1000"));
  EXPECT_THAT(*m, HasSubstr("not the 10 given"));
  EXPECT_FALSE(q_mismatch(seen, 1000).has_value());
  EXPECT_FALSE(q_mismatch(flow_settings_seen(subscribed_with_flows({})), 10).has_value());
}

}  // namespace
}  // namespace permitcheck::spec
