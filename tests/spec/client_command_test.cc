// handle_command (spec/client_command.h) path by path under rev-d and legacy: the client events
// each path emits, what the command returns itself and which messages it hands off; then, as a
// property, every rev-d run over random situations passes the Monitor and returns exactly the P
// the broker debited.
//
#include "spec/client_command.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "spec/finalize.h"
#include "spec/monitor.h"
#include "spec/resolve.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Optional;

using monitor_testing::dump;
using monitor_testing::kTwoTo31;
using monitor_testing::kTwoTo32Minus1;
using monitor_testing::legacy;
using monitor_testing::rev_d;

// Command 1 on incarnation 1 over connection c1.
CommandSituation situation(std::optional<std::uint64_t> message_permits, std::int64_t batch_size,
                           AckSet ack = {}) {
  return CommandSituation{.inc = Id::number(1),
                          .cmd = Id::number(1),
                          .cnx = Id::text("c1"),
                          .message_permits = message_permits,
                          .ack_set = std::move(ack),
                          .batch_size = batch_size,
                          .batched = batch_size > 1};
}

std::vector<std::string> kinds(const CommandRun& run) {
  std::vector<std::string> out;
  for (const Event& e : run.events) out.emplace_back(event_name(e));
  return out;
}

// The events of one kind, in order.
template <typename T>
std::vector<T> all_of(const CommandRun& run) {
  std::vector<T> out;
  for (const Event& e : run.events) {
    if (const T* t = std::get_if<T>(&e)) out.push_back(*t);
  }
  return out;
}

template <typename T>
T only(const CommandRun& run) {
  const std::vector<T> found = all_of<T>(run);
  EXPECT_EQ(found.size(), 1u) << "expected exactly one " << event_name(Event(T{}));
  return found.empty() ? T{} : found.front();
}

std::vector<std::int64_t> claimed_indexes(const CommandRun& run) {
  std::vector<std::int64_t> out;
  for (const Claim& c : all_of<Claim>(run)) out.push_back(c.index.value_or(-1));
  return out;
}

std::vector<Id> ids(std::initializer_list<const char*> names) {
  std::vector<Id> out;
  for (const char* name : names) out.push_back(Id::text(name));
  return out;
}

std::int64_t total_returned(const CommandRun& run) {
  return run.returned_by_command + static_cast<std::int64_t>(run.handed_off.size());
}

// The run on a fresh incarnation with initial grant q, every handed-off message then consumed,
// checked by the Monitor under the ruleset the run was made with.
MonitorReport checked(const Ruleset& rules, const CommandRun& run, std::int64_t q = 1000000) {
  std::vector<Event> events = {
      IncOpen{.inc = Id::number(1), .cnx = Id::text("c1"), .consumer = 0},
      IncFlowEnabled{.inc = Id::number(1)},
      Flow{.cnx = Id::text("c1"), .consumer = 0, .permits = q, .inc = Id::number(1)},
  };
  events.insert(events.end(), run.events.begin(), run.events.end());
  for (Event& e : returns_of(run)) events.push_back(std::move(e));
  const TraceHeader header{.source = TraceSource::kClient,
                           .ruleset = rules.id,
                           .q = q,
                           .t = q > 1 ? std::optional<std::int64_t>(q / 2) : std::nullopt};
  return check_trace(header, events);
}

// ======================================================================================
// Failures before and around metadata (C2, C6, C7; L1-L3, X1, X6).
// ======================================================================================

TEST(ClientCommand, ChecksumFailureSettlesTheResolvedP) {
  CommandSituation s = situation(100, 100);
  s.early_failure = FailureStage::kChecksum;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "corrupt", "settle"));
  EXPECT_EQ(only<Resolve>(d).p, 100);
  EXPECT_EQ(only<Resolve>(d).source, PermitSource::kExplicit);
  EXPECT_EQ(only<Corrupt>(d).stage, FailureStage::kChecksum);
  EXPECT_EQ(only<Settle>(d).n, 100);
  EXPECT_EQ(d.returned_by_command, 100);
  EXPECT_THAT(d.handed_off, IsEmpty());
  EXPECT_FALSE(d.closes_connection);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());

  const CommandRun l = handle_command(legacy(), s);  // L1
  EXPECT_THAT(kinds(l), ElementsAre("recv", "corrupt", "settle"));
  EXPECT_EQ(l.returned_by_command, 1);
  EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
}

TEST(ClientCommand, MetadataFailureSettlesTheExplicitP) {
  CommandSituation s = situation(10, 10);
  s.early_failure = FailureStage::kMetadata;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "corrupt", "settle"));
  EXPECT_EQ(only<Corrupt>(d).stage, FailureStage::kMetadata);
  EXPECT_EQ(d.returned_by_command, 10);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
  const CommandRun l = handle_command(legacy(), s);  // L2
  EXPECT_THAT(kinds(l), ElementsAre("recv", "corrupt", "settle"));
  EXPECT_EQ(l.returned_by_command, 1);
}

TEST(ClientCommand, DecompressionFailureSettlesP) {
  CommandSituation s = situation(10, 10);
  s.early_failure = FailureStage::kDecompress;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d),
              ElementsAre("recv", "resolve", "metadata", "resolve", "corrupt", "settle"));
  EXPECT_EQ(only<Metadata>(d).batch_size, 10);
  EXPECT_EQ(only<Corrupt>(d).stage, FailureStage::kDecompress);
  EXPECT_EQ(d.returned_by_command, 10);
  EXPECT_THAT(d.handed_off, IsEmpty());
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
  const CommandRun l = handle_command(legacy(), s);  // L3
  EXPECT_THAT(kinds(l), ElementsAre("recv", "metadata", "corrupt", "settle"));
  EXPECT_EQ(l.returned_by_command, 1);
  EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
}

TEST(ClientCommand, X1_OldBrokerEarlyFailureOfACompleteBatchReturnsOne) {
  CommandSituation s = situation(std::nullopt, 8);
  s.early_failure = FailureStage::kChecksum;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_EQ(only<Resolve>(d).source, PermitSource::kLegacy);
  EXPECT_EQ(d.returned_by_command, 1);
  EXPECT_FALSE(d.closes_connection);
  const MonitorReport r = checked(rev_d(), d);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
  EXPECT_THAT(r.deviations, ::testing::Contains(Field(&Finding::rule, RuleId::kX1)));
}

TEST(ClientCommand, OldBrokerEarlyFailureCountsEveryAckSetBit) {
  CommandSituation s = situation(std::nullopt, 8, AckSet::from_indexes({0, 2, 5, 9}));
  s.early_failure = FailureStage::kMetadata;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_EQ(only<Resolve>(d).p, 4);
  EXPECT_EQ(only<Resolve>(d).source, PermitSource::kAckSet);
  EXPECT_EQ(d.returned_by_command, 4);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
}

// ======================================================================================
// Native expansion (K1-K5, B2/K3 partial batches, C7 batch failures; L4, L5).
// ======================================================================================

TEST(ClientCommand, CompleteBatchHandsOffEveryMessage) {
  const CommandSituation s = situation(8, 8);
  const CommandRun d = handle_command(rev_d(), s);
  std::vector<std::string> expected = {"recv", "resolve", "metadata", "resolve"};
  expected.insert(expected.end(), 8, "claim");
  expected.push_back("settle");
  EXPECT_THAT(kinds(d), ElementsAreArray(expected));
  EXPECT_THAT(claimed_indexes(d), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(d.handed_off.size(), 8u);
  EXPECT_EQ(d.handed_off.front(), Id::text("m1.0"));
  EXPECT_EQ(only<Settle>(d).n, 0);
  EXPECT_EQ(d.returned_by_command, 0);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());

  const CommandRun l = handle_command(legacy(), s);
  std::vector<std::string> legacy_expected = {"recv", "metadata"};
  legacy_expected.insert(legacy_expected.end(), 8, "claim");
  legacy_expected.push_back("settle");
  EXPECT_THAT(kinds(l), ElementsAreArray(legacy_expected));
  EXPECT_EQ(l.handed_off.size(), 8u);
  EXPECT_EQ(l.returned_by_command, 0);
  EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
}

TEST(ClientCommand, PartialBatchWordThirtySevenOfEightIsThree) {
  const CommandSituation s = situation(3, 8, AckSet({37}));
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "claim", "claim",
                                    "claim", "settle"));
  EXPECT_THAT(all_of<Resolve>(d), ::testing::Each(Field(&Resolve::p, 3)));
  EXPECT_THAT(claimed_indexes(d), ElementsAre(0, 2, 5));
  EXPECT_EQ(d.handed_off, ids({"m1.0", "m1.2", "m1.5"}));
  EXPECT_EQ(d.returned_by_command, 0);
  EXPECT_EQ(total_returned(d), 3);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());

  const CommandRun l = handle_command(legacy(), s);
  EXPECT_THAT(claimed_indexes(l), ElementsAre(0, 2, 5));
  EXPECT_EQ(total_returned(l), 3);
  EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
}

TEST(ClientCommand, C1_PartialBatchWithTheFieldAbsentUsesTheBoundedPopcount) {
  const CommandSituation s = situation(std::nullopt, 8, AckSet::from_indexes({0, 2, 5, 9}));
  const CommandRun d = handle_command(rev_d(), s);
  const std::vector<Resolve> resolves = all_of<Resolve>(d);
  ASSERT_EQ(resolves.size(), 2u);
  EXPECT_EQ(resolves[0].p, 4);  // C2: B unknown, every bit counts
  EXPECT_EQ(resolves[1].p, 3);  // C1 step 2 once B = 8 is known
  EXPECT_EQ(resolves[1].source, PermitSource::kAckSet);
  EXPECT_THAT(claimed_indexes(d), ElementsAre(0, 2, 5));
  EXPECT_EQ(total_returned(d), 3);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
}

TEST(ClientCommand, BatchSkipsOfEachReasonStayCommandOwned) {
  const std::vector<std::pair<IndexFate, SkipReason>> reasons = {
      {IndexFate::kDuplicate, SkipReason::kDuplicate},
      {IndexFate::kCompacted, SkipReason::kCompacted},
      {IndexFate::kBeforeStart, SkipReason::kBeforeStart},
      {IndexFate::kDeadLetter, SkipReason::kDeadLetter}};
  for (const auto& [fate, reason] : reasons) {
    SCOPED_TRACE(skip_reason_name(reason));
    CommandSituation s = situation(4, 4);
    s.fates = {IndexFate::kDeliver, fate};
    const CommandRun d = handle_command(rev_d(), s);
    EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "claim", "skip",
                                      "claim", "claim", "settle"));
    EXPECT_EQ(only<Skip>(d).index, 1);
    EXPECT_EQ(only<Skip>(d).reason, reason);
    EXPECT_EQ(d.handed_off, ids({"m1.0", "m1.2", "m1.3"}));
    EXPECT_EQ(only<Settle>(d).n, 1);
    EXPECT_EQ(d.returned_by_command, 1);
    EXPECT_THAT(all_of<DirectReturn>(d), IsEmpty());
    EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());

    const CommandRun l = handle_command(legacy(), s);  // legacy returns batch skips at the end
    EXPECT_EQ(only<Settle>(l).n, 1);
    EXPECT_EQ(total_returned(l), 4);
    EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
  }
}

TEST(ClientCommand, NonBatchedSkipsSettleTheUnitUnderRevD) {
  const std::vector<std::pair<IndexFate, SkipReason>> reasons = {
      {IndexFate::kDuplicate, SkipReason::kDuplicate},
      {IndexFate::kCompacted, SkipReason::kCompacted},
      {IndexFate::kBeforeStart, SkipReason::kBeforeStart},
      {IndexFate::kDeadLetter, SkipReason::kDeadLetter}};
  for (const auto& [fate, reason] : reasons) {
    SCOPED_TRACE(skip_reason_name(reason));
    CommandSituation s = situation(1, 1);
    s.fates = {fate};
    const CommandRun d = handle_command(rev_d(), s);
    EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "skip", "settle"));
    EXPECT_EQ(only<Skip>(d).reason, reason);
    EXPECT_EQ(only<Settle>(d).n, 1);
    EXPECT_EQ(d.returned_by_command, 1);
    EXPECT_THAT(d.handed_off, IsEmpty());
    EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
    EXPECT_THAT(checked(legacy(), handle_command(legacy(), s)).violations, IsEmpty());
  }
}

TEST(ClientCommand, L9_LegacyNonBatchedSkipsReturnDirectlyOrNothing) {
  for (const auto& [fate, path] : std::vector<std::pair<IndexFate, std::string>>{
           {IndexFate::kDuplicate, "duplicate"}, {IndexFate::kDeadLetter, "dead_letter"}}) {
    SCOPED_TRACE(path);
    CommandSituation s = situation(1, 1);
    s.fates = {fate};
    const CommandRun l = handle_command(legacy(), s);
    EXPECT_THAT(kinds(l), ElementsAre("recv", "metadata", "skip", "direct_return", "settle"));
    EXPECT_EQ(only<DirectReturn>(l).n, 1);
    EXPECT_THAT(only<DirectReturn>(l).path, Optional(path));
    EXPECT_EQ(only<Settle>(l).n, 0);
    EXPECT_EQ(l.returned_by_command, 1);
  }
  CommandSituation before = situation(1, 1);
  before.fates = {IndexFate::kBeforeStart};
  const CommandRun l9 = handle_command(legacy(), before);
  EXPECT_THAT(kinds(l9), ElementsAre("recv", "metadata", "skip", "settle"));
  EXPECT_EQ(l9.returned_by_command, 0);  // L9: 1 permit lost
}

TEST(ClientCommand, FailedHandOffRestoresItsUnit) {
  CommandSituation s = situation(4, 4);
  s.fates = {IndexFate::kDeliver, IndexFate::kDeliver, IndexFate::kHandoffFails};
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "claim", "claim",
                                    "claim", "restore", "claim", "settle"));
  EXPECT_EQ(only<Restore>(d).msg, Id::text("m1.2"));
  EXPECT_EQ(d.handed_off, ids({"m1.0", "m1.1", "m1.3"}));
  EXPECT_EQ(only<Settle>(d).n, 1);
  EXPECT_EQ(total_returned(d), 4);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());

  CommandSituation single = situation(1, 1);
  single.fates = {IndexFate::kHandoffFails};
  const CommandRun one = handle_command(rev_d(), single);
  EXPECT_THAT(kinds(one),
              ElementsAre("recv", "resolve", "metadata", "resolve", "claim", "restore", "settle"));
  EXPECT_THAT(one.handed_off, IsEmpty());
  EXPECT_EQ(one.returned_by_command, 1);
  EXPECT_THAT(checked(rev_d(), one).violations, IsEmpty());
}

TEST(ClientCommand, ParseFailureMidBatchSettlesTheRest) {
  CommandSituation s = situation(10, 10);
  s.fates = {IndexFate::kDeliver, IndexFate::kDeliver, IndexFate::kDeliver, IndexFate::kDeliver,
             IndexFate::kDuplicate, IndexFate::kParseFails};
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "claim", "claim",
                                    "claim", "claim", "skip", "corrupt", "settle"));
  EXPECT_EQ(only<Corrupt>(d).stage, FailureStage::kBatch);
  EXPECT_THAT(only<Corrupt>(d).index, Optional(5));
  EXPECT_EQ(d.handed_off.size(), 4u);
  EXPECT_EQ(only<Settle>(d).n, 6);
  EXPECT_EQ(total_returned(d), 10);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());

  const CommandRun l = handle_command(legacy(), s);
  EXPECT_EQ(only<Settle>(l).n, 2);  // K skipped + 1
  EXPECT_EQ(total_returned(l), 6);
  EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
}

TEST(ClientCommand, ParseFailureBeyondTheDeliverableIndexes) {
  CommandSituation s = situation(3, 8, AckSet({37}));
  s.fates.assign(8, IndexFate::kDeliver);
  s.fates[6] = IndexFate::kParseFails;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(claimed_indexes(d), ElementsAre(0, 2, 5));
  EXPECT_THAT(only<Corrupt>(d).index, Optional(6));
  EXPECT_EQ(only<Settle>(d).n, 0);
  EXPECT_EQ(total_returned(d), 3);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
  const CommandRun l = handle_command(legacy(), s);
  EXPECT_EQ(total_returned(l), 4);  // 1 over-granted
}

// ======================================================================================
// Validation outcomes (C3-C5, K8).
// ======================================================================================

TEST(ClientCommand, InconsistentExplicitValueSettlesPWithoutHandOff) {
  const CommandSituation s = situation(3, 8);  // explicit 3, complete batch of 8
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d),
              ElementsAre("recv", "resolve", "metadata", "resolve", "corrupt", "settle"));
  EXPECT_EQ(only<Corrupt>(d).stage, FailureStage::kInconsistent);
  EXPECT_EQ(only<Settle>(d).n, 3);
  EXPECT_THAT(d.handed_off, IsEmpty());
  EXPECT_FALSE(d.closes_connection);
  EXPECT_FALSE(d.closes_consumer);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
  // Legacy does not read the field: the batch of 8 is delivered.
  const CommandRun l = handle_command(legacy(), s);
  EXPECT_EQ(l.handed_off.size(), 8u);
}

TEST(ClientCommand, FieldAbsentBitsOnlyBeyondBSettleTheEarlyValue) {
  const CommandSituation s = situation(std::nullopt, 8, AckSet::from_indexes({9}));
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d),
              ElementsAre("recv", "resolve", "metadata", "resolve", "corrupt", "settle"));
  EXPECT_EQ(only<Corrupt>(d).stage, FailureStage::kInconsistent);
  EXPECT_EQ(only<Settle>(d).n, 1);
  EXPECT_FALSE(d.closes_connection);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
}

TEST(ClientCommand, C5_K8_MoreDeliverableThanPIsInconsistent) {
  // A corrupt payload that decodes 9 messages where B = P = 8: the 9th finds no unit left (K8),
  // so the command goes to corrupted-data handling (C5) without handing it off.
  CommandSituation s = situation(8, 8);
  s.decoded = 9;
  const CommandRun run = handle_command(rev_d(), s);
  EXPECT_EQ(run.handed_off.size(), 8u);
  const Corrupt corrupt = only<Corrupt>(run);
  EXPECT_EQ(corrupt.stage, FailureStage::kInconsistent);
  EXPECT_EQ(corrupt.index, 8);
  EXPECT_EQ(only<Settle>(run).n, 0);
  EXPECT_FALSE(run.closes_connection);
  EXPECT_THAT(checked(rev_d(), run).violations, IsEmpty());

  // Legacy has no budget: it hands off all 9 and the monitor, checking against rev-d, sees K8.
  const CommandRun legacy = handle_command(ruleset(RulesetId::kLegacy), s);
  EXPECT_EQ(legacy.handed_off.size(), 9u);
  const MonitorReport r = checked(rev_d(), legacy);
  ASSERT_FALSE(r.violations.empty());
}

TEST(ClientCommand, C4_OutOfRangeExplicitValueClosesTheConnection) {
  for (std::uint64_t bad : {std::uint64_t{0}, kTwoTo31, kTwoTo32Minus1}) {
    SCOPED_TRACE(bad);
    const CommandSituation s = situation(bad, 1);
    const CommandRun d = handle_command(rev_d(), s);
    EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "protocol_error"));
    EXPECT_EQ(only<ProtocolError>(d).cnx, Id::text("c1"));
    EXPECT_THAT(only<ProtocolError>(d).reason, ::testing::HasSubstr(std::to_string(bad)));
    EXPECT_TRUE(d.closes_connection);
    EXPECT_FALSE(d.closes_consumer);
    EXPECT_EQ(d.returned_by_command, 0);
    EXPECT_THAT(d.handed_off, IsEmpty());
    EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());

    // Even an early failure does not settle anything: C4 comes first.
    CommandSituation failing = s;
    failing.early_failure = FailureStage::kChecksum;
    EXPECT_THAT(kinds(handle_command(rev_d(), failing)),
                ElementsAre("recv", "resolve", "protocol_error"));

    // Legacy does not read the field: a plain single message.
    const CommandRun l = handle_command(legacy(), s);
    EXPECT_THAT(kinds(l), ElementsAre("recv", "metadata", "claim", "settle"));
    EXPECT_FALSE(l.closes_connection);
    EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
  }
}

// ======================================================================================
// Specialised paths (S1-S4, S7).
// ======================================================================================

TEST(ClientCommand, NonFinalChunkReturnsOne) {
  CommandSituation s = situation(1, 1);
  s.path = PayloadPath::kChunkNonFinal;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "transfer",
                                    "direct_return", "settle"));
  EXPECT_EQ(only<Transfer>(d).path, TransferPath::kChunk);
  EXPECT_EQ(only<DirectReturn>(d).n, 1);
  EXPECT_THAT(only<DirectReturn>(d).path, Optional(std::string("chunk")));
  EXPECT_EQ(only<Settle>(d).n, 0);
  EXPECT_EQ(d.returned_by_command, 1);
  EXPECT_THAT(d.handed_off, IsEmpty());
  const MonitorReport r = checked(rev_d(), d);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r.deviations);

  const CommandRun l = handle_command(legacy(), s);
  EXPECT_THAT(kinds(l), ElementsAre("recv", "metadata", "direct_return", "settle"));
  EXPECT_EQ(l.returned_by_command, 1);
  EXPECT_THAT(checked(legacy(), l).violations, IsEmpty());
}

TEST(ClientCommand, FinalChunkIsHandedOffAndReturnsWhenConsumed) {
  CommandSituation s = situation(1, 1);
  s.path = PayloadPath::kChunkFinal;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "claim", "settle"));
  EXPECT_EQ(d.handed_off, ids({"m1.0"}));
  EXPECT_EQ(d.returned_by_command, 0);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
}

TEST(ClientCommand, CryptoDiscardOfACompleteBatchReturnsB) {
  CommandSituation s = situation(8, 8);
  s.path = PayloadPath::kCryptoDiscard;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d), ElementsAre("recv", "resolve", "metadata", "resolve", "transfer",
                                    "direct_return", "settle"));
  EXPECT_EQ(only<Transfer>(d).path, TransferPath::kCrypto);
  EXPECT_EQ(only<DirectReturn>(d).n, 8);
  EXPECT_EQ(only<Settle>(d).n, 0);
  EXPECT_EQ(d.returned_by_command, 8);
  const MonitorReport r = checked(rev_d(), d);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
  EXPECT_THAT(r.deviations, IsEmpty()) << dump(r.deviations);

  const CommandRun l = handle_command(legacy(), s);
  EXPECT_THAT(kinds(l), ElementsAre("recv", "metadata", "direct_return", "settle"));
  EXPECT_EQ(l.returned_by_command, 8);
}

TEST(ClientCommand, X2_CryptoDiscardOfAPartialRedeliveryReturnsB) {
  CommandSituation s = situation(3, 10, AckSet::from_indexes({0, 4, 9}));
  s.path = PayloadPath::kCryptoDiscard;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_EQ(d.returned_by_command, 10);
  const MonitorReport r = checked(rev_d(), d);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
  EXPECT_THAT(r.deviations, ::testing::Contains(Field(&Finding::rule, RuleId::kX2)));
  EXPECT_EQ(handle_command(legacy(), s).returned_by_command, 10);  // L10
}

TEST(ClientCommand, X3_CryptoFailReturnsNothing) {
  CommandSituation s = situation(8, 8);
  s.path = PayloadPath::kCryptoFail;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d),
              ElementsAre("recv", "resolve", "metadata", "resolve", "transfer", "settle"));
  EXPECT_EQ(only<Transfer>(d).path, TransferPath::kCrypto);
  EXPECT_EQ(only<Settle>(d).n, 0);
  EXPECT_EQ(d.returned_by_command, 0);
  EXPECT_THAT(d.handed_off, IsEmpty());
  const MonitorReport r = checked(rev_d(), d);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
  EXPECT_THAT(r.deviations, ::testing::Contains(Field(&Finding::rule, RuleId::kX3)));

  const CommandRun l = handle_command(legacy(), s);
  EXPECT_THAT(kinds(l), ElementsAre("recv", "metadata", "settle"));
  EXPECT_EQ(l.returned_by_command, 0);
}

TEST(ClientCommand, CryptoConsumeIsNative) {
  CommandSituation s = situation(4, 4);
  s.path = PayloadPath::kCryptoConsume;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(all_of<Transfer>(d), IsEmpty());
  EXPECT_EQ(d.handed_off.size(), 4u);
  EXPECT_EQ(total_returned(d), 4);
  EXPECT_THAT(checked(rev_d(), d).violations, IsEmpty());
}

TEST(ClientCommand, ZeroQueueBatchClosesTheConsumerNotTheConnection) {
  CommandSituation s = situation(8, 8);
  s.zero_queue = true;
  const CommandRun d = handle_command(rev_d(), s);
  EXPECT_THAT(kinds(d),
              ElementsAre("recv", "resolve", "metadata", "resolve", "inc_close", "drop"));
  EXPECT_EQ(only<IncClose>(d).inc, Id::number(1));
  EXPECT_EQ(only<Drop>(d).cmd, Id::number(1));
  EXPECT_EQ(only<Drop>(d).n, 8);
  EXPECT_TRUE(d.closes_consumer);
  EXPECT_FALSE(d.closes_connection);
  EXPECT_EQ(d.returned_by_command, 0);
  EXPECT_THAT(d.handed_off, IsEmpty());
  EXPECT_THAT(checked(rev_d(), d, /*q=*/0).violations, IsEmpty());

  const CommandRun l = handle_command(legacy(), s);
  EXPECT_THAT(kinds(l), ElementsAre("recv", "metadata", "inc_close", "drop"));
  EXPECT_TRUE(l.closes_consumer);

  // A non-batched message is fine on a zero-queue consumer.
  CommandSituation single = situation(1, 1);
  single.zero_queue = true;
  const CommandRun one = handle_command(rev_d(), single);
  EXPECT_FALSE(one.closes_consumer);
  EXPECT_EQ(one.handed_off.size(), 1u);
  EXPECT_THAT(checked(rev_d(), one, /*q=*/0).violations, IsEmpty());
}

TEST(ClientCommand, HandleCommandIsPureAndReturnsOfListsEveryHandOff) {
  CommandSituation s = situation(3, 8, AckSet({37}));
  s.fates = {IndexFate::kDeliver, IndexFate::kDeliver, IndexFate::kDeadLetter};
  EXPECT_EQ(kinds(handle_command(rev_d(), s)), kinds(handle_command(rev_d(), s)));
  EXPECT_EQ(handle_command(rev_d(), s).handed_off, handle_command(rev_d(), s).handed_off);
  const CommandRun run = handle_command(rev_d(), s);
  const std::vector<Event> returns = returns_of(run);
  ASSERT_EQ(returns.size(), run.handed_off.size());
  for (std::size_t i = 0; i < returns.size(); ++i) {
    EXPECT_EQ(std::get<MsgReturn>(returns[i]).msg, run.handed_off[i]);
    EXPECT_EQ(std::get<MsgReturn>(returns[i]).n, 1);
  }
}

// ======================================================================================
// Properties over random situations.
// ======================================================================================

// B in 1..1000, ack_set absent, sparse (a few indexes, some beyond B) or dense (most bits of
// every word), the field absent, consistent, any in-range value or out of range, random fates,
// a random failure stage and payload path.
CommandSituation gen_situation() {
  const std::int64_t b = *rc::gen::inRange<std::int64_t>(1, 1001);
  AckSet ack;
  switch (*rc::gen::inRange(0, 3)) {
    case 0:
      break;  // complete batch
    case 1: {  // sparse
      const auto count = *rc::gen::inRange<std::size_t>(0, 6);
      ack = AckSet::from_indexes(*rc::gen::container<std::vector<std::int64_t>>(
          count, rc::gen::inRange<std::int64_t>(0, b + 70)));
      break;
    }
    default: {  // dense
      const std::int64_t words = (b + 63) / 64 + (*rc::gen::arbitrary<bool>() ? 1 : 0);
      std::vector<std::int64_t> w;
      for (std::int64_t i = 0; i < words; ++i) {
        w.push_back(*rc::gen::arbitrary<bool>()
                        ? -1
                        : (*rc::gen::arbitrary<std::int64_t>() | *rc::gen::arbitrary<std::int64_t>()));
      }
      ack = AckSet(std::move(w));
      break;
    }
  }
  const std::int64_t candidate = candidate_permits(b, ack);
  std::optional<std::uint64_t> mp;
  switch (*rc::gen::weightedElement<int>({{2, 0}, {6, 1}, {1, 2}, {1, 3}})) {
    case 0:
      break;  // old broker
    case 1:
      mp = static_cast<std::uint64_t>(candidate);  // consistent (0 when nothing is deliverable)
      break;
    case 2:
      mp = *rc::gen::inRange<std::uint64_t>(1, 2000);
      break;
    default:
      mp = *rc::gen::element<std::uint64_t>(0, kTwoTo31, kTwoTo32Minus1);
      break;
  }
  CommandSituation s = situation(mp, b, std::move(ack));
  s.cmd = Id::number(*rc::gen::inRange<std::uint64_t>(1, 100));
  const auto fate = rc::gen::weightedElement<IndexFate>(
      {{30, IndexFate::kDeliver}, {1, IndexFate::kDuplicate}, {1, IndexFate::kCompacted},
       {1, IndexFate::kBeforeStart}, {1, IndexFate::kDeadLetter}, {1, IndexFate::kHandoffFails}});
  s.fates = *rc::gen::container<std::vector<IndexFate>>(static_cast<std::size_t>(b), fate);
  switch (*rc::gen::weightedElement<int>({{6, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 4}})) {
    case 1:
      s.early_failure = FailureStage::kChecksum;
      break;
    case 2:
      s.early_failure = FailureStage::kMetadata;
      break;
    case 3:
      s.early_failure = FailureStage::kDecompress;
      break;
    case 4:  // batch deserialization fails at a random index
      s.fates[static_cast<std::size_t>(*rc::gen::inRange<std::int64_t>(0, b))] =
          IndexFate::kParseFails;
      break;
    default:
      break;
  }
  s.path = *rc::gen::weightedElement<PayloadPath>(
      {{12, PayloadPath::kNative}, {1, PayloadPath::kChunkNonFinal}, {1, PayloadPath::kChunkFinal},
       {1, PayloadPath::kCryptoDiscard}, {1, PayloadPath::kCryptoFail},
       {1, PayloadPath::kCryptoConsume}});
  s.zero_queue = *rc::gen::weightedElement<bool>({{9, false}, {1, true}});
  return s;
}

RC_GTEST_PROP(ClientCommand, K8_RevDRunsAreCleanAndReturnExactlyP, ()) {
  const CommandSituation s = gen_situation();
  const CommandRun run = handle_command(rev_d(), s);
  const MonitorReport r = checked(rev_d(), run);
  RC_LOG() << dump(r.violations);
  RC_ASSERT(r.violations.empty());

  const std::int64_t p = candidate_permits(s.batch_size, s.ack_set);
  const bool exact_field = s.message_permits && message_permits_in_range(*s.message_permits) &&
                           p >= 1 && static_cast<std::int64_t>(*s.message_permits) == p;
  const bool native = (s.path == PayloadPath::kNative || s.path == PayloadPath::kChunkFinal ||
                       s.path == PayloadPath::kCryptoConsume) &&
                      !(s.zero_queue && s.batched);
  RC_TAG(exact_field, native);
  if (exact_field && native) {
    RC_ASSERT(total_returned(run) == p);
    RC_ASSERT(!run.closes_connection);
    RC_ASSERT(static_cast<std::int64_t>(run.handed_off.size()) <= p);  // K8
  }
  RC_ASSERT(!(run.closes_connection && run.returned_by_command != 0));  // C4: no credit
}

RC_GTEST_PROP(ClientCommand, LegacyRunsConformToTheLegacyRuleset, ()) {
  const CommandSituation s = gen_situation();
  const CommandRun run = handle_command(legacy(), s);
  const MonitorReport r = checked(legacy(), run);
  RC_LOG() << dump(r.violations);
  RC_ASSERT(r.violations.empty());
  RC_ASSERT(!run.closes_connection);  // legacy never reads the field (no C4)
}

}  // namespace
}  // namespace permitcheck::spec
