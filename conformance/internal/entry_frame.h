// The bytes of one MESSAGE frame as the conformance broker sends it: the command (consumer,
// message id, redelivery count, consumer epoch, ack_set, message_permits when the broker sends
// the field), the entry's metadata and its payload (a native batch of B messages, or one
// single message), with the entry's fault applied: a wrong crc32c, unparsable metadata, a
// batch cut inside message `truncate_at` (at its Cut position), messages past B, or a payload
// declared LZ4 that does not decompress. What the broker records and debits for the entry is the broker's (broker.cc).
//
//   std::string bytes = internal::entry_frame(delivery, {.consumer = 1, .ledger = 7,
//                                                        .batch_size = 4, .message_permits = 4});
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_ENTRY_FRAME_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_ENTRY_FRAME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "conformance/broker.h"

namespace permitcheck::conformance::internal {

// What the broker decided for the frame, beyond the Delivery itself.
struct EntryHead {
  std::uint64_t consumer = 0;
  std::uint64_t ledger = 0;
  std::int64_t batch_size = 1;                   // B (1 for a single message)
  std::optional<std::uint64_t> message_permits;  // P, when the broker sends the field (W3)
  std::optional<std::uint64_t> epoch;            // M2: the epoch the consumer named
};

std::string entry_frame(const Delivery& d, const EntryHead& head);

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_ENTRY_FRAME_H_
