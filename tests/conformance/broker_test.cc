// The conformance broker's protocol side, over a raw socket: a command it does not implement
// is answered with a protocol ERROR naming it (with its request id), never with silence; and
// how it times the client's Flows.
#include "conformance/broker.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>

#include "protocol/frame.h"
#include "tests/capture/capture_testing.h"
#include "tests/conformance/raw_client.h"

namespace permitcheck::conformance {
namespace {

using testing::RawClient;
namespace frames = capture::testing::frames;

// A LOOKUP is answered with the broker's own URL, or with BrokerOptions::advertised_url (a tap
// in front of it), never with proxy_through_service_url: the client goes where it is told.
TEST(BrokerProtocol, ALookupNamesTheBrokerOrItsAdvertisedUrl) {
  for (const std::string& advertised : {std::string(), std::string("pulsar://127.0.0.1:6651")}) {
    ConformanceBroker broker({.send_message_permits = true, .topic_hint = {},
                              .advertised_url = advertised});
    ASSERT_TRUE(broker.start().ok());
    RawClient client(broker.port());
    ASSERT_TRUE(client.connected());
    wire::BaseCommand lookup;
    lookup.set_type(wire::BaseCommand::LOOKUP);
    lookup.mutable_lookuptopic()->set_topic("persistent://public/default/permitcheck");
    lookup.mutable_lookuptopic()->set_request_id(4);
    ASSERT_TRUE(client.send(lookup));
    std::optional<wire::BaseCommand> in = client.receive();
    ASSERT_TRUE(in.has_value()) << "no answer to LOOKUP";
    ASSERT_EQ(in->type(), wire::BaseCommand::LOOKUP_RESPONSE);
    const wire::CommandLookupTopicResponse& r = in->lookuptopicresponse();
    EXPECT_EQ(r.request_id(), 4u);
    EXPECT_EQ(r.brokerserviceurl(), advertised.empty() ? broker.url() : advertised);
    EXPECT_EQ(r.response(), wire::CommandLookupTopicResponse::Connect);
    EXPECT_FALSE(r.proxy_through_service_url());
  }
}

TEST(BrokerProtocol, UnimplementedCommandsGetAnErrorWithTheirRequestId) {
  ConformanceBroker broker({});
  ASSERT_TRUE(broker.start().ok());
  RawClient client(broker.port());
  ASSERT_TRUE(client.connected());

  wire::BaseCommand connect;
  connect.set_type(wire::BaseCommand::CONNECT);
  connect.mutable_connect()->set_client_version("raw-test");
  connect.mutable_connect()->set_protocol_version(21);
  ASSERT_TRUE(client.send(connect));
  std::optional<wire::BaseCommand> in = client.receive();
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->type(), wire::BaseCommand::CONNECTED);

  wire::BaseCommand seek;
  seek.set_type(wire::BaseCommand::SEEK);
  seek.mutable_seek()->set_consumer_id(0);
  seek.mutable_seek()->set_request_id(7);
  ASSERT_TRUE(client.send(seek));
  in = client.receive();
  ASSERT_TRUE(in.has_value()) << "no answer to SEEK";
  ASSERT_EQ(in->type(), wire::BaseCommand::ERROR);
  EXPECT_EQ(in->error().request_id(), 7u);
  EXPECT_NE(in->error().message().find("SEEK is not implemented"), std::string::npos);

  wire::BaseCommand schema;
  schema.set_type(wire::BaseCommand::GET_SCHEMA);
  schema.mutable_getschema()->set_request_id(9);
  schema.mutable_getschema()->set_topic("persistent://public/default/t");
  ASSERT_TRUE(client.send(schema));
  in = client.receive();
  ASSERT_TRUE(in.has_value()) << "no answer to GET_SCHEMA";
  ASSERT_EQ(in->type(), wire::BaseCommand::ERROR);
  EXPECT_EQ(in->error().request_id(), 9u);

  // A PING after them is still answered: the connection stayed open.
  wire::BaseCommand ping;
  ping.set_type(wire::BaseCommand::PING);
  ping.mutable_ping();
  ASSERT_TRUE(client.send(ping));
  in = client.receive();
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->type(), wire::BaseCommand::PONG);
  broker.stop();
}

// How long the client takes to write a Flow (BrokerView::slowest_flow, which the scenarios'
// silences after an acknowledgement scale with) is timed from its previous command, and only
// when the broker wrote no MESSAGE between the two: a Flow that follows a delivery waited on
// the client's receive loop (pulsar-flex looks at its queue once a second), not on a Flow its
// acknowledgement made due.
TEST(BrokerTiming, AFlowIsTimedFromTheClientsPreviousCommandNotFromADelivery) {
  using std::chrono::milliseconds;
  ConformanceBroker broker({});
  ASSERT_TRUE(broker.start().ok());
  RawClient client(broker.port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.send_frame(frames::connect()));
  ASSERT_TRUE(client.receive().has_value());
  ASSERT_TRUE(client.send_frame(frames::subscribe(1, 1)));
  ASSERT_TRUE(client.receive().has_value());
  auto flow = [&](std::uint32_t permits) { return client.send_frame(frames::flow(1, permits)); };
  auto flows = [&](int n) {
    return broker.wait_until([n](const BrokerView& v) { return v.flows >= n; }, milliseconds(5000));
  };
  ASSERT_TRUE(flow(10));
  ASSERT_TRUE(flows(1));

  // A delivery, then a Flow 300 ms later: not timed.
  ASSERT_TRUE(broker.deliver(Delivery{.entry = 1}).ok());
  std::optional<wire::BaseCommand> in = client.receive();
  ASSERT_TRUE(in.has_value());
  ASSERT_EQ(in->type(), wire::BaseCommand::MESSAGE);
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_TRUE(flow(1));
  ASSERT_TRUE(flows(2));
  EXPECT_LT(broker.view().slowest_flow, milliseconds(300));

  // Its acknowledgement, then a Flow 300 ms later: timed.
  ASSERT_TRUE(client.send_frame(frames::ack(1, in->message().message_id().entryid())));
  ASSERT_TRUE(broker.wait_until([](const BrokerView& v) { return v.outstanding == 0; },
                                milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_TRUE(flow(1));
  ASSERT_TRUE(flows(3));
  EXPECT_GE(broker.view().slowest_flow, milliseconds(300));
  broker.stop();
}

}  // namespace
}  // namespace permitcheck::conformance
