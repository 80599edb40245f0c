// Configuration of the reference implementation: which behaviour (legacy Pulsar or the final
// rules), which deployment (broker flavour, dispatcher, pool, consumers) and, in the test-only
// mutant build, which seeded mutant is active.
//
//   WorldConfig config{.mode = Mode::kRevD,
//                      .dispatcher = spec::DispatcherKind::kPersistentKeyShared,
//                      .consumers = 2, .connections = 1, .q = 4};
//   World world(config);   // impl/world.h
//
// The implementation is an independent second implementation of the rulebook: it never calls
// the specification's decision functions. Types shared with the specification (DispatcherKind,
// Event) are only vocabulary for recording what it does.
#ifndef PERMITCHECK_IMPL_CONFIG_H_
#define PERMITCHECK_IMPL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "impl/mutant.h"
#include "spec/ruleset.h"
#include "spec/vocabulary.h"

namespace permitcheck::impl {

// Which behaviour the broker and client implement.
enum class Mode {
  kLegacy,  // Apache Pulsar before PIP-491: rulebook section 10 (L1-L11)
  kRevA,    // proposal revision A: rev-d but connection-scoped credit (F5)
  kRevB,    // revision B: direct returns beside the budget (F1), F2, F3
  kRevC,    // revision C: inconsistent commands close the connection (F4)
  kRevD,    // the final rules (rulebook sections 2-8)
};
std::string_view mode_name(Mode mode);  // "legacy", "rev-a", ..., "rev-d"

// The ruleset a mode implements, and back (every ruleset has a mode).
spec::RulesetId ruleset_of(Mode mode);
Mode mode_of(spec::RulesetId ruleset);

// Where revisions A-C differ from rev-d, as data: the decision-point values of the ruleset of
// the same name (rulebook section 11). Only the values are read; how each is implemented is
// this implementation's own code, never the specification's.
struct Behaviour {
  spec::DirectReturns direct_returns = spec::DirectReturns::kFromBudget;         // K6 (F1)
  spec::DispatcherCoverage dispatchers = spec::DispatcherCoverage::kAllSix;      // B6 (F2)
  spec::SkippedRelease skipped_release = spec::SkippedRelease::kDuplicateOnly;   // S5 (F3)
  spec::InconsistentHandling inconsistent = spec::InconsistentHandling::kCorruptedData;  // C5 (F4)
  spec::ReturnScope return_scope = spec::ReturnScope::kIncarnation;              // N3 (F5)
};
Behaviour behaviour_of(Mode mode);

// How CommandMessage.message_permits reaches the client (W1, W3).
enum class BrokerFlavour {
  kUpgraded,        // the broker serializes P on every command
  kOld,             // an old broker: the field is never on the wire
  kStrippingProxy,  // an upgraded broker behind a proxy that strips unknown fields
};
std::string_view broker_flavour_name(BrokerFlavour flavour);

// ConsumerCryptoFailureAction of the Java client (S3, S4).
enum class CryptoAction { kDiscard, kFail, kConsume };
std::string_view crypto_action_name(CryptoAction action);

// A message position: entry id and batch index.
struct MessagePosition {
  std::int64_t entry = 0;
  std::int64_t index = 0;
  friend auto operator<=>(const MessagePosition&, const MessagePosition&) = default;
};

struct ConsumerOptions {
  std::optional<MessagePosition> start_message_id;  // earlier messages are skipped (K4; L9)
  std::optional<int> max_redeliver_count;           // dead-letter threshold (S5)
  CryptoAction crypto_action = CryptoAction::kConsume;  // for payloads it cannot decrypt
  // ZeroQueueConsumerImpl (Q = 0): each receive() grants 1 permit; a batch closes the consumer
  // (S7). Its per-receive grants are outside the trace format's Q-based wire checks, so its
  // Subscribe and Flow are recorded without the incarnation (wire checks skip it).
  bool zero_queue = false;
};

struct WorldConfig {
  Mode mode = Mode::kRevD;
  Mutant mutant = Mutant::kNone;  // only honoured by the permitcheck_impl_mutants build
  spec::DispatcherKind dispatcher = spec::DispatcherKind::kPersistentShared;
  BrokerFlavour flavour = BrokerFlavour::kUpgraded;
  int consumers = 1;     // consumer k has protocol consumer_id k
  int connections = 1;   // pooled connections; consumer k uses slot k % connections
  std::int64_t q = 4;    // receiver queue size Q
  std::int64_t t = 0;    // Flow threshold T; 0 = Java's default max(1, Q / 2)
  ConsumerOptions options;

  // The implementation's own copy of the default, on purpose: impl/ never calls the
  // specification's decisions (docs/architecture.md), so a wrong spec::default_threshold and a
  // wrong implementation cannot hide each other (properties/spec_model.h compares the two).
  std::int64_t threshold() const { return t > 0 ? t : (q / 2 > 0 ? q / 2 : 1); }
};

}  // namespace permitcheck::impl

#endif  // PERMITCHECK_IMPL_CONFIG_H_
