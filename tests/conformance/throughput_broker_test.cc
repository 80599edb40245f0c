// The conformance broker's bench mode (conformance/throughput_broker.h) over a raw socket: one
// message at a time in the latency phase, as many as the permits allow in the rate phase and
// never more, a session's numbers once everything is acknowledged, a lookup that keeps the
// client on the address it used, and a session cut short reported as such.
#include "conformance/throughput_broker.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "protocol/frame.h"
#include "tests/conformance/raw_client.h"

namespace permitcheck::conformance {
namespace {

using namespace std::chrono_literals;

// A consumer on a raw socket (RawClient: reads give up after 5 s, a silent broker fails the
// test).
class Consumer : public testing::RawClient {
 public:
  using RawClient::RawClient;

  // CONNECT and SUBSCRIBE (consumer 1), expecting CONNECTED and SUCCESS.
  void subscribe() {
    wire::BaseCommand c;
    c.set_type(wire::BaseCommand::CONNECT);
    c.mutable_connect()->set_client_version("throughput_broker_test");
    c.mutable_connect()->set_protocol_version(19);
    ASSERT_TRUE(send(c));
    std::optional<wire::BaseCommand> r = receive();
    ASSERT_TRUE(r && r->type() == wire::BaseCommand::CONNECTED);
    wire::BaseCommand s;
    s.set_type(wire::BaseCommand::SUBSCRIBE);
    s.mutable_subscribe()->set_topic("persistent://public/default/t");
    s.mutable_subscribe()->set_subscription("s");
    s.mutable_subscribe()->set_subtype(1);  // Shared
    s.mutable_subscribe()->set_consumer_id(1);
    s.mutable_subscribe()->set_request_id(1);
    ASSERT_TRUE(send(s));
    r = receive();
    ASSERT_TRUE(r && r->type() == wire::BaseCommand::SUCCESS);
  }

  bool flow(std::uint32_t permits) {
    wire::BaseCommand c;
    c.set_type(wire::BaseCommand::FLOW);
    c.mutable_flow()->set_consumer_id(1);
    c.mutable_flow()->set_messagepermits(permits);
    return send(c);
  }

  bool ack(std::uint64_t entry) {
    wire::BaseCommand c;
    c.set_type(wire::BaseCommand::ACK);
    c.mutable_ack()->set_consumer_id(1);
    c.mutable_ack()->set_ack_type(wire::CommandAck::Individual);
    c.mutable_ack()->add_message_id()->set_ledgerid(7);
    c.mutable_ack()->mutable_message_id(0)->set_entryid(entry);
    return send(c);
  }

  // The next MESSAGE's entry id; 0 when the next frame is something else or none comes.
  std::uint64_t next_entry() {
    std::optional<wire::BaseCommand> m = receive();
    if (!m || m->type() != wire::BaseCommand::MESSAGE) return 0;
    EXPECT_EQ(m->message().message_permits(), 1u);  // one permit per single message
    return m->message().message_id().entryid();
  }
};

TEST(ThroughputBroker, SendsOneMessageAtATimeThenAsManyAsThePermitsAllowAndTimesEveryAck) {
  ThroughputBroker broker({.latency_messages = 3, .rate_messages = 40});
  ASSERT_TRUE(broker.start().ok());
  Consumer c(broker.port());
  ASSERT_NO_FATAL_FAILURE(c.subscribe());
  ASSERT_TRUE(c.flow(20));
  for (std::uint64_t e = 1; e <= 3; ++e) {
    ASSERT_EQ(c.next_entry(), e);
    EXPECT_FALSE(c.more_within(50ms)) << "latency phase sent past message " << e << " unacked";
    ASSERT_TRUE(c.ack(e));
  }
  // Rate phase: the 17 permits left, all at once, then nothing until the next Flow.
  std::vector<std::uint64_t> got;
  for (int i = 0; i < 17; ++i) got.push_back(c.next_entry());
  EXPECT_EQ(got.front(), 4u);
  EXPECT_EQ(got.back(), 20u);
  EXPECT_FALSE(c.more_within(50ms)) << "sent past the 20 permits granted";
  for (std::uint64_t e : got) ASSERT_TRUE(c.ack(e));
  ASSERT_TRUE(c.flow(100));  // more than the 23 left: only 23 come
  for (std::uint64_t e = 21; e <= 43; ++e) {
    ASSERT_EQ(c.next_entry(), e);
    ASSERT_TRUE(c.ack(e));
  }
  absl::StatusOr<ThroughputSession> s = broker.wait_session(5s);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(c.more_within(50ms));
  EXPECT_EQ(s->latency_us.size(), 3u);
  EXPECT_EQ(s->loaded_us.size(), 40u);
  EXPECT_EQ(s->granted, 120);
  EXPECT_EQ(s->flows, 2);
  EXPECT_EQ(s->acks, 43);
  for (double us : s->latency_us) EXPECT_GT(us, 0);
  EXPECT_GT(s->rate_seconds, 0);
  EXPECT_NEAR(s->messages_per_second * s->rate_seconds, 40, 1e-6);
}

TEST(ThroughputBroker, WithoutEnoughPermitsTheSessionDoesNotFinishAndSaysHowFarItGot) {
  ThroughputBroker broker({.latency_messages = 1, .rate_messages = 10});
  ASSERT_TRUE(broker.start().ok());
  Consumer c(broker.port());
  ASSERT_NO_FATAL_FAILURE(c.subscribe());
  ASSERT_TRUE(c.flow(5));
  for (std::uint64_t e = 1; e <= 5; ++e) {
    ASSERT_EQ(c.next_entry(), e);
    ASSERT_TRUE(c.ack(e));
  }
  EXPECT_FALSE(c.more_within(50ms));
  absl::StatusOr<ThroughputSession> s = broker.wait_session(200ms);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.status().message().find("5 of 11 messages acked, 5 sent, 5 permits granted"),
            std::string::npos)
      << s.status();
}

TEST(ThroughputBroker, AConsumerThatLeavesEarlyEndsItsSessionAsAborted) {
  ThroughputBroker broker({.latency_messages = 2, .rate_messages = 2});
  ASSERT_TRUE(broker.start().ok());
  {
    Consumer c(broker.port());
    ASSERT_NO_FATAL_FAILURE(c.subscribe());
    ASSERT_TRUE(c.flow(10));
    ASSERT_EQ(c.next_entry(), 1u);
  }  // closed with message 1 unacked
  absl::StatusOr<ThroughputSession> s = broker.wait_session(5s);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kAborted);
  EXPECT_NE(s.status().message().find("connection closed"), std::string::npos) << s.status();
  // The next consumer gets a session of its own, from entry 1.
  Consumer d(broker.port());
  ASSERT_NO_FATAL_FAILURE(d.subscribe());
  ASSERT_TRUE(d.flow(10));
  for (std::uint64_t e = 1; e <= 4; ++e) {
    ASSERT_EQ(d.next_entry(), e);
    ASSERT_TRUE(d.ack(e));
  }
  EXPECT_TRUE(broker.wait_session(5s).ok());
}

TEST(ThroughputBroker, ALookupKeepsTheClientOnTheAddressItUsed) {
  ThroughputBroker broker({.latency_messages = 1, .rate_messages = 0});
  ASSERT_TRUE(broker.start().ok());
  Consumer c(broker.port());
  wire::BaseCommand l;
  l.set_type(wire::BaseCommand::LOOKUP);
  l.mutable_lookuptopic()->set_topic("persistent://public/default/t");
  l.mutable_lookuptopic()->set_request_id(9);
  ASSERT_TRUE(c.send(l));
  std::optional<wire::BaseCommand> r = c.receive();
  ASSERT_TRUE(r && r->type() == wire::BaseCommand::LOOKUP_RESPONSE);
  EXPECT_EQ(r->lookuptopicresponse().request_id(), 9u);
  EXPECT_EQ(r->lookuptopicresponse().brokerserviceurl(), broker.url());
  EXPECT_TRUE(r->lookuptopicresponse().proxy_through_service_url());
}

}  // namespace
}  // namespace permitcheck::conformance
