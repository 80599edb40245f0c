#include "conformance/internal/entry_frame.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/frame.h"

namespace permitcheck::conformance::internal {
namespace {

// Bytes of message `m` that stay before the cut (its size field is 4 bytes; its metadata and
// payload are at least 2 bytes each here, so every class cuts strictly inside its part).
std::size_t cut_offset(Cut cut, const protocol::BatchMessage& m) {
  const std::size_t meta = m.metadata.ByteSizeLong();
  switch (cut) {
    case Cut::kSizeField1: return 1;
    case Cut::kSizeField2: return 2;
    case Cut::kSizeField3: return 3;
    case Cut::kBoundary: return 0;
    case Cut::kMetadata: return 4 + std::max<std::size_t>(1, meta / 2);
    case Cut::kPayload: return 4 + meta + std::max<std::size_t>(1, m.payload.size() / 2);
  }
  return 3;
}

}  // namespace

std::string entry_frame(const Delivery& d, const EntryHead& head) {
  wire::BaseCommand command;
  command.set_type(wire::BaseCommand::MESSAGE);
  wire::CommandMessage* m = command.mutable_message();
  m->set_consumer_id(head.consumer);
  m->mutable_message_id()->set_ledgerid(head.ledger);
  m->mutable_message_id()->set_entryid(d.entry);
  if (d.redelivery_count > 0) m->set_redelivery_count(d.redelivery_count);
  if (head.epoch) m->set_consumer_epoch(*head.epoch);
  for (std::int64_t w : d.ack_set.words()) m->add_ack_set(w);
  if (head.message_permits) {
    m->set_message_permits(static_cast<std::uint32_t>(*head.message_permits));
  }

  wire::MessageMetadata meta;
  meta.set_producer_name("permitcheck");
  meta.set_sequence_id(d.entry);
  meta.set_publish_time(1700000000000ULL + d.entry);
  std::string payload;
  if (d.batched) {
    meta.set_num_messages_in_batch(static_cast<std::int32_t>(head.batch_size));
    std::vector<protocol::BatchMessage> msgs;
    const std::int64_t n =
        head.batch_size + (d.fault == EntryFault::kExtraMessages ? d.extra_messages : 0);
    std::size_t cut = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      protocol::BatchMessage bm;
      bm.payload = absl::StrCat("m", d.entry, ".", i);
      bm.metadata.set_payload_size(static_cast<std::int32_t>(bm.payload.size()));
      bm.metadata.set_sequence_id(static_cast<std::uint64_t>(i));
      if (i == d.truncate_at) cut = protocol::encode_batch(msgs).size() + cut_offset(d.cut, bm);
      msgs.push_back(std::move(bm));
    }
    payload = protocol::encode_batch(msgs);
    if (d.fault == EntryFault::kTruncatedBatch) payload.resize(cut);
  } else {
    payload = absl::StrCat("m", d.entry);
  }
  if (d.fault == EntryFault::kDecompression) {
    // Declared LZ4 with a size the bytes cannot decompress to.
    meta.set_compression(wire::LZ4);
    meta.set_uncompressed_size(static_cast<std::uint32_t>(payload.size() + 16));
  }
  std::string meta_bytes = meta.SerializeAsString();
  if (d.fault == EntryFault::kMetadata) meta_bytes = std::string("\x07\x07\xff\xff\x01", 5);
  return protocol::encode_message(command, meta_bytes, payload, d.fault == EntryFault::kChecksum);
}

}  // namespace permitcheck::conformance::internal
