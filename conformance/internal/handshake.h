// The conformance brokers' answers to the commands that take a client to a consumer and keep
// its connection alive: CONNECTED (protocol version at most 21, 5 MiB messages), the topic's
// LOOKUP_RESPONSE (this broker, authoritative), PARTITIONED_METADATA_RESPONSE (not
// partitioned) and PONG. Shared by ConformanceBroker and ThroughputBroker.
//
//   if (std::optional<wire::BaseCommand> a = internal::handshake_answer(in, url)) send(*a);
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_HANDSHAKE_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_HANDSHAKE_H_

#include <optional>
#include <string>

#include "protocol/proto/pulsar_wire.pb.h"

namespace permitcheck::conformance::internal {

// The answer to `in` when it is CONNECT, LOOKUP, PARTITIONED_METADATA or PING; nullopt for
// any other command. `url` is the broker's own pulsar://HOST:PORT (the lookup's answer).
std::optional<wire::BaseCommand> handshake_answer(const wire::BaseCommand& in,
                                                  const std::string& url);

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_HANDSHAKE_H_
