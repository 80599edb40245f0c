// The client's handling of one CommandMessage, as a pure function of the situation and the
// ruleset: the executable specification of rules C1-C7, K1-K8 and S1-S7 on the receive
// pipeline (checksum -> metadata -> decompression -> specialised path or native expansion).
//
// It returns the client accounting events the handling produces (trace-format.md), so the
// same run can be checked by the Monitor, written as a trace, or compared with an
// implementation. Message returns happen later (the application consumes); callers append
// them, for example with returns_of().
//
//   CommandSituation s{.inc = Id::number(1), .cmd = Id::number(7), .message_permits = 100,
//                      .batch_size = 100, .batched = true,
//                      .early_failure = FailureStage::kChecksum};
//   CommandRun legacy = handle_command(ruleset(RulesetId::kLegacy), s);  // settles 1 (L1)
//   CommandRun revd = handle_command(ruleset(RulesetId::kRevD), s);      // settles 100
#ifndef PERMITCHECK_SPEC_CLIENT_COMMAND_H_
#define PERMITCHECK_SPEC_CLIENT_COMMAND_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "spec/ack_set.h"
#include "spec/command_budget.h"
#include "spec/events.h"
#include "spec/ruleset.h"

namespace permitcheck::spec {

// What happens to one index of the payload when native expansion reaches it.
enum class IndexFate {
  kDeliver,       // handed off to the per-message lifecycle (K2)
  kDuplicate,     // skipped: already delivered (K4, S6)
  kCompacted,     // skipped: compacted out (K4)
  kBeforeStart,   // skipped: before startMessageId (K4; L9)
  kDeadLetter,    // skipped: past the dead-letter threshold (K4, S5)
  kHandoffFails,  // claimed, the hand-off fails, the unit is restored (K2)
  kParseFails,    // batch deserialization fails here; expansion stops (C7)
};

// The specialised path a command's payload takes (S1-S4).
enum class PayloadPath {
  kNative,         // budget and per-message lifecycle
  kChunkNonFinal,  // S2: returns 1
  kChunkFinal,     // S2: the assembled message returns 1 when consumed
  kCryptoDiscard,  // S3: returns B
  kCryptoFail,     // S4: returns nothing; held for redelivery (X3)
  kCryptoConsume,  // delivered still encrypted: native
};

// One command as the client sees it, and what its payload turns out to be.
struct CommandSituation {
  Id inc;
  Id cmd;
  Id cnx;                                      // for protocol_error
  std::optional<std::uint64_t> message_permits;  // wire field, read unsigned
  AckSet ack_set;
  std::int64_t batch_size = 1;                 // B in the metadata
  std::optional<std::int64_t> decoded;         // messages the payload really holds (default B);
                                               // a corrupt payload may hold more (K8, C5)
  bool batched = false;                        // native batch (else a single message)
  std::optional<FailureStage> early_failure;   // checksum, metadata or decompress
  std::vector<IndexFate> fates;                // per index in [0, B); missing ones deliver
  PayloadPath path = PayloadPath::kNative;
  bool zero_queue = false;                     // receiver queue Q = 0 (S7)
  std::string msg_prefix = "m";                // message ids: prefix + cmd + "." + index
};

struct CommandRun {
  std::vector<Event> events;        // client accounting events, in order
  std::vector<Id> handed_off;       // messages now in the per-message lifecycle
  std::int64_t returned_by_command = 0;  // direct returns + terminal transition
  bool closes_connection = false;   // C4
  bool closes_consumer = false;     // S7
};

// Handles one command under `rules`. Pure: same inputs, same events.
CommandRun handle_command(const Ruleset& rules, const CommandSituation& situation);

// S5/S6: whether the message object of an index skipped for `reason` is released at skip
// time. A duplicate's object is (S6); a dead-letter message's object stays alive for
// dead-letter handling (S5), except under revision B, which released every skipped object (F3).
bool releases_at_skip(const Ruleset& rules, SkipReason reason);

// One msg_return per handed-off message of `run` (the application consumed them all).
std::vector<Event> returns_of(const CommandRun& run);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_CLIENT_COMMAND_H_
