// The broker-stats comparison (realbroker/balance.h) on known traffic, without a broker: a
// seeded discrepancy is caught in both directions, correct traffic passes; the stats parser
// and the URL parsers on known input.
#include "realbroker/balance.h"

#include "gtest/gtest.h"
#include "realbroker/admin.h"
#include "realbroker/http.h"
#include "spec/ack_set.h"

namespace permitcheck::realbroker {
namespace {

using spec::Id;

// One consumer: Flow 10, an entry of 4 and a partial entry of 6 with 2 deliverable indexes.
WireBalance known_traffic() {
  WireBalance w;
  w.on_event(spec::Subscribe{.cnx = Id::number(1), .consumer = 0});
  w.on_event(spec::SubscribeOk{.cnx = Id::number(1), .consumer = 0});
  w.on_event(spec::Flow{.cnx = Id::number(1), .consumer = 0, .permits = 10});
  w.on_event(spec::Message{.cnx = Id::number(1), .consumer = 0, .cmd = Id::number(1),
                           .batch_size = 4});
  w.on_event(spec::Message{.cnx = Id::number(1), .consumer = 0, .cmd = Id::number(2),
                           .ack_set = spec::AckSet::from_indexes({1, 4}), .batch_size = 6});
  return w;
}

SubscriptionStats broker_with(std::int64_t available) {
  return SubscriptionStats{.name = "s", .consumers = {ConsumerStats{.available_permits = available}}};
}

TEST(RealBrokerBalance, CorrectTrafficMatches) {
  const StatsComparison c = compare_with_stats("end", known_traffic(), broker_with(4));
  EXPECT_EQ(c.wire_available, 4);  // 10 - 4 - 2
  EXPECT_TRUE(c.matches());
  EXPECT_EQ(c.finding(), "");
}

TEST(RealBrokerBalance, SeededOverCreditIsCaught) {
  // The broker debited B = 6 less what the ack_set says: it reports 2 more than the wire.
  const StatsComparison c = compare_with_stats("end", known_traffic(), broker_with(6));
  EXPECT_FALSE(c.matches());
  EXPECT_EQ(c.finding().substr(0, 3), "B4:");
  EXPECT_NE(c.finding().find("over-credit"), std::string::npos);
}

TEST(RealBrokerBalance, SeededUnderCreditIsCaught) {
  const StatsComparison c = compare_with_stats("end", known_traffic(), broker_with(0));
  EXPECT_NE(c.finding().find("under-credit"), std::string::npos);
  EXPECT_EQ(c.finding().substr(0, 3), "B4:");
}

TEST(RealBrokerBalance, ClosedConsumerLeavesTheBalance) {
  WireBalance w = known_traffic();
  w.on_event(spec::CloseConsumer{.cnx = Id::number(1), .consumer = 0});
  EXPECT_EQ(w.live_total(), 0);
  EXPECT_TRUE(w.live_consumers().empty());
}

TEST(RealBrokerAdmin, ParsesTopicStats) {
  absl::StatusOr<TopicStats> s = parse_topic_stats(
      R"({"msgInCounter":60,"subscriptions":{"sub":{"type":"Shared","msgBacklog":0,)"
      R"("unackedMessages":3,"consumers":[{"consumerName":"c","availablePermits":7,)"
      R"("unackedMessages":3,"msgOutCounter":60}]}}})");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->subscriptions.size(), 1u);
  EXPECT_EQ(s->subscriptions[0].consumers[0].available_permits, 7);
  EXPECT_EQ(s->subscriptions[0].unacked_messages, 3);
  EXPECT_FALSE(parse_topic_stats("not json").ok());
}

TEST(RealBrokerHttp, ParsesUrlsAndChunks) {
  absl::StatusOr<HttpUrl> u = parse_http_url("http://127.0.0.1:8080/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 8080);
  EXPECT_FALSE(parse_http_url("https://x").ok());
  EXPECT_EQ(*decode_chunked("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), "abcde");
  EXPECT_FALSE(decode_chunked("zz\r\n").ok());
  EXPECT_EQ(*topic_path("persistent://public/default/t"), "persistent/public/default/t");
}

}  // namespace
}  // namespace permitcheck::realbroker
