// The protocol frames the reference implementation exchanges, and what a published entry
// holds. Payload faults (checksum, metadata, decompression, batch parse, failed hand-off),
// compacted-out indexes, encryption, chunking and custom payload formats are properties of the
// stored entry, so the client meets them exactly where Pulsar's receive pipeline would.
//
//   EntrySpec e{.payload = {.batch_size = 8, .batched = true}, .pre_acked = {1, 3}};
//   world.publish({e});   // partial batch: P = 6 when dispatched
#ifndef PERMITCHECK_IMPL_WIRE_H_
#define PERMITCHECK_IMPL_WIRE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace permitcheck::impl {

// What the payload of one stored entry decodes to.
struct Payload {
  std::int64_t batch_size = 1;  // num_messages_in_batch (B)
  bool batched = false;         // native batch (B > 1) or a single message
  bool checksum_ok = true;
  bool metadata_ok = true;
  bool decompress_ok = true;
  std::int64_t parse_fails_at = -1;    // batch deserialization fails at this index
  std::int64_t handoff_fails_at = -1;  // the hand-off of this index fails (queue offer)
  std::vector<std::int64_t> compacted_out;  // SingleMessageMetadata.compacted_out indexes
  bool encrypted = false;      // the consumer has no key for it
  bool custom_format = false;  // decoded by the consumer's MessagePayloadProcessor
  std::int64_t chunk_uuid = -1;  // chunked message: uuid, chunk id, total chunks
  int chunk_id = 0;
  int num_chunks = 0;
  int key = 0;  // ordering key (Key_Shared)
  std::int64_t bytes_per_message = 100;

  bool chunked() const { return chunk_uuid >= 0; }
};

// One entry to publish, with the indexes the subscription already acknowledged.
struct EntrySpec {
  Payload payload;
  std::vector<std::int64_t> pre_acked;  // ack_set of redeliveries: these bits are cleared
  // Bits the broker's ack_set words carry at or beyond B (B2 ignores them, X6 before B is
  // known); only on the wire when some index is acknowledged (an ack_set is sent).
  std::vector<std::int64_t> stray_ack_bits;
};

// ---- Frames ----
struct CommandMessage {
  std::uint64_t consumer_id = 0;
  std::uint64_t cmd = 0;  // unique per command (trace id)
  std::int64_t entry = 0;
  std::vector<std::int64_t> ack_set;  // Java BitSet words; empty = absent
  std::optional<std::uint64_t> message_permits;  // read unsigned; absent = not on the wire
  int redelivery_count = 0;
  std::int64_t epoch = 0;
  std::shared_ptr<const Payload> payload;
};
struct CommandFlow {
  std::uint64_t consumer_id = 0;
  std::int64_t permits = 0;
};
struct CommandSubscribe {
  std::uint64_t consumer_id = 0;
  std::int64_t epoch = 0;  // the client's consumer epoch: the broker's consumer starts at it
};
struct CommandSuccess {
  std::uint64_t consumer_id = 0;
};
struct CommandError {
  std::uint64_t consumer_id = 0;
};
struct CommandCloseConsumer {
  std::uint64_t consumer_id = 0;
};
struct CommandAck {
  std::uint64_t consumer_id = 0;
  std::int64_t entry = 0;
  std::vector<std::int64_t> indexes;  // batch indexes; empty with whole_entry
  bool whole_entry = false;
  std::optional<std::string> validation_error;
};
struct CommandRedeliverUnacknowledgedMessages {
  std::uint64_t consumer_id = 0;
  std::int64_t epoch = 0;
};

using Frame = std::variant<CommandMessage, CommandFlow, CommandSubscribe, CommandSuccess,
                           CommandError, CommandCloseConsumer, CommandAck,
                           CommandRedeliverUnacknowledgedMessages>;

}  // namespace permitcheck::impl

#endif  // PERMITCHECK_IMPL_WIRE_H_
