// The conformance broker's protocol side, over a raw socket: a command it does not implement
// is answered with a protocol ERROR naming it (with its request id), never with silence.
#include "conformance/broker.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "protocol/frame.h"
#include "tests/conformance/raw_client.h"

namespace permitcheck::conformance {
namespace {

using testing::RawClient;

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

}  // namespace
}  // namespace permitcheck::conformance
