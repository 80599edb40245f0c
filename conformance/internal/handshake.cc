#include "conformance/internal/handshake.h"

#include <algorithm>

namespace permitcheck::conformance::internal {

std::optional<wire::BaseCommand> handshake_answer(const wire::BaseCommand& in,
                                                  const std::string& url) {
  wire::BaseCommand out;
  switch (in.type()) {
    case wire::BaseCommand::CONNECT: {
      out.set_type(wire::BaseCommand::CONNECTED);
      auto* c = out.mutable_connected();
      c->set_server_version("permitcheck-conformance");
      c->set_protocol_version(std::min(in.connect().protocol_version(), 21));
      c->set_max_message_size(5 * 1024 * 1024);
      c->mutable_feature_flags()->set_supports_auth_refresh(false);
      return out;
    }
    case wire::BaseCommand::LOOKUP: {
      out.set_type(wire::BaseCommand::LOOKUP_RESPONSE);
      auto* r = out.mutable_lookuptopicresponse();
      r->set_request_id(in.lookuptopic().request_id());
      r->set_brokerserviceurl(url);
      r->set_response(wire::CommandLookupTopicResponse::Connect);
      r->set_authoritative(true);
      return out;
    }
    case wire::BaseCommand::PARTITIONED_METADATA: {
      out.set_type(wire::BaseCommand::PARTITIONED_METADATA_RESPONSE);
      auto* r = out.mutable_partitionmetadataresponse();
      r->set_request_id(in.partitionmetadata().request_id());
      r->set_partitions(0);
      r->set_response(wire::CommandPartitionedTopicMetadataResponse::Success);
      return out;
    }
    case wire::BaseCommand::PING:
      out.set_type(wire::BaseCommand::PONG);
      out.mutable_pong();
      return out;
    default:
      return std::nullopt;
  }
}

}  // namespace permitcheck::conformance::internal
