// The conformance broker answers a SUBSCRIBE as Pulsar 4.2.4 does (pulsar-broker 4.2.4,
// ServerCnx.java:1406-1413, handleSubscribe): a consumer id already live on the connection
// gets SUCCESS and keeps its consumer, so a second Flow after it adds to the same permits
// (apache/pulsar#20591's doubled Flow). A new consumer id, or the same id after the consumer
// closed, is a new incarnation.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "conformance/broker.h"
#include "protocol/frame.h"
#include "tests/capture/capture_testing.h"
#include "tests/conformance/raw_client.h"

namespace permitcheck::conformance {
namespace {

using std::chrono::milliseconds;
using testing::RawClient;
namespace frames = capture::testing::frames;

TEST(BrokerSubscribe, ASecondSubscribeOfALiveConsumerIdIsSuccessAndKeepsTheConsumer) {
  ConformanceBroker broker({});
  ASSERT_TRUE(broker.start().ok());
  RawClient client(broker.port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send_frame(frames::connect()));
  ASSERT_TRUE(client.receive().has_value());
  ASSERT_TRUE(client.send_frame(frames::subscribe(1, 1)));
  std::optional<wire::BaseCommand> in = client.receive();
  ASSERT_TRUE(in.has_value());
  ASSERT_EQ(in->type(), wire::BaseCommand::SUCCESS);
  ASSERT_TRUE(client.send_frame(frames::flow(1, 10)));
  ASSERT_TRUE(broker.wait_until([](const BrokerView& v) { return v.granted == 10; },
                                milliseconds(5000)));

  // The same consumer id again on the same connection: SUCCESS (its request id), no new
  // incarnation, and the next Flow adds to the permits the consumer already has.
  ASSERT_TRUE(client.send_frame(frames::subscribe(1, 2)));
  in = client.receive();
  ASSERT_TRUE(in.has_value());
  ASSERT_EQ(in->type(), wire::BaseCommand::SUCCESS);
  EXPECT_EQ(in->success().request_id(), 2u);
  ASSERT_TRUE(client.send_frame(frames::flow(1, 10)));
  ASSERT_TRUE(broker.wait_until([](const BrokerView& v) { return v.flows >= 2; },
                                milliseconds(5000)));
  const BrokerView v = broker.view();
  EXPECT_EQ(v.subscribes, 1);
  EXPECT_EQ(v.repeated_subscribes, 1);
  EXPECT_EQ(v.granted, 20);
  int subscribe_events = 0;
  for (const spec::Event& e : broker.trace()) {
    subscribe_events += std::holds_alternative<spec::Subscribe>(e) ? 1 : 0;
  }
  EXPECT_EQ(subscribe_events, 1);
  broker.stop();
}

TEST(BrokerSubscribe, ANewConsumerIdOrASubscribeAfterTheCloseIsANewIncarnation) {
  ConformanceBroker broker({});
  ASSERT_TRUE(broker.start().ok());
  RawClient client(broker.port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send_frame(frames::connect()));
  ASSERT_TRUE(client.receive().has_value());
  ASSERT_TRUE(client.send_frame(frames::subscribe(1, 1)));
  ASSERT_TRUE(client.receive().has_value());
  ASSERT_TRUE(client.send_frame(frames::flow(1, 10)));
  ASSERT_TRUE(broker.wait_until([](const BrokerView& v) { return v.granted == 10; },
                                milliseconds(5000)));
  ASSERT_TRUE(broker.close_consumer().ok());
  ASSERT_TRUE(client.receive().has_value());  // CLOSE_CONSUMER
  ASSERT_TRUE(client.send_frame(frames::subscribe(1, 3)));
  std::optional<wire::BaseCommand> in = client.receive();
  ASSERT_TRUE(in.has_value());
  ASSERT_EQ(in->type(), wire::BaseCommand::SUCCESS);
  ASSERT_TRUE(client.send_frame(frames::subscribe(2, 4)));
  in = client.receive();
  ASSERT_TRUE(in.has_value());
  ASSERT_EQ(in->type(), wire::BaseCommand::SUCCESS);
  const BrokerView v = broker.view();
  EXPECT_EQ(v.subscribes, 3);
  EXPECT_EQ(v.repeated_subscribes, 0);
  EXPECT_EQ(v.consumer, 2u);
  broker.stop();
}

}  // namespace
}  // namespace permitcheck::conformance
