// The vectors of Pulsar's own PIP-491 implementation tests (the open pull request
// apache/pulsar#26337: MessagePermitAccountingTest, the broker's ConsumerTest, ConsumerImplTest,
// CorruptedBatchMessagePermitTest), restated as traces in our format (docs/trace-format.md)
// and judged by the monitor, each with the behaviour the upstream test expects (it must pass)
// and the behaviour it rules out (it must fail with the rule shown). Each test is named after
// the upstream test; no upstream code is reproduced, only the values of its vectors.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spec/monitor.h"
#include "trace/reader.h"

namespace permitcheck::trace {
namespace {

using spec::RuleId;

constexpr const char* kClient =
    R"({"trace":"pip491-permits","version":1,"source":"client","ruleset":"rev-d","q":16,"t":8})"
    "\n"
    R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})"
    "\n"
    R"({"ev":"inc_flow_enabled","inc":1})"
    "\n"
    R"({"ev":"flow","cnx":"c1","consumer":0,"permits":16,"inc":1})"
    "\n";
constexpr const char* kBroker =
    R"({"trace":"pip491-permits","version":1,"source":"model","ruleset":"rev-d","q":100})"
    "\n"
    R"({"ev":"connect","cnx":"c1"})"
    "\n"
    R"({"ev":"subscribe","cnx":"c1","consumer":0})"
    "\n"
    R"({"ev":"subscribe_ok","cnx":"c1","consumer":0})"
    "\n"
    R"({"ev":"flow","cnx":"c1","consumer":0,"permits":100})"
    "\n";

// The rules the monitor reports for `prefix` followed by `lines` (empty: the trace passes).
std::vector<RuleId> verdict(const char* prefix, const std::string& lines) {
  absl::StatusOr<Trace> t = read_trace_text(std::string(prefix) + lines);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {RuleId::kE1};
  const spec::MonitorReport r = spec::check_trace(t->header, t->events);
  std::vector<RuleId> rules;
  for (const spec::Finding& f : r.violations) rules.push_back(f.rule);
  return rules;
}

using ::testing::Contains;
using ::testing::IsEmpty;

// ---- the broker's ConsumerTest ----

// Slot 0 takes 2^31-1; slot 1's P of 1 overflows the total and is refused; slot 0 stays.
TEST(UpstreamConsumerTest, testSendMessagesResultRejectsPartialFinalization) {
  const std::string send =
      R"({"ev":"send","consumer":0,"dispatcher":"persistent_shared","entries":[)"
      R"({"cmd":1,"batch_size":2147483647,"admitted":true,"p":2147483647},)"
      R"({"cmd":2,"batch_size":1,"admitted":true}],)";
  EXPECT_THAT(verdict(kBroker, send + R"("consumer_debit":2147483647,"dispatcher_debit":2147483647})" "\n"),
              IsEmpty());
  // All-or-nothing: slot 0 dropped too (what the monitor required before).
  EXPECT_THAT(verdict(kBroker,
                      R"({"ev":"send","consumer":0,"dispatcher":"persistent_shared","entries":[)"
                      R"({"cmd":1,"batch_size":2147483647,"admitted":true},)"
                      R"({"cmd":2,"batch_size":1,"admitted":true}],)"
                      R"("consumer_debit":0,"dispatcher_debit":0})" "\n"),
              Contains(RuleId::kB8));
  // The overflowing slot finalized and debited.
  EXPECT_THAT(verdict(kBroker,
                      R"({"ev":"send","consumer":0,"dispatcher":"persistent_shared","entries":[)"
                      R"({"cmd":1,"batch_size":2147483647,"admitted":true,"p":2147483647},)"
                      R"({"cmd":2,"batch_size":1,"admitted":true,"p":1}],)"
                      R"("consumer_debit":2147483648,"dispatcher_debit":2147483648})" "\n"),
              Contains(RuleId::kB8));
}

// The write of a send fails: the broker closes and removes the consumer (a failed write is
// connection loss, B11).
TEST(UpstreamConsumerTest, testSendMessagesWriteFailureDisconnectsConsumer) {
  const std::string send =
      R"({"ev":"send","consumer":0,"inc":"b1","dispatcher":"persistent_shared","entries":[)"
      R"({"cmd":1,"batch_size":1,"admitted":true,"p":1}],"consumer_debit":1,"dispatcher_debit":1})"
      "\n"
      R"({"ev":"write_failed","consumer":0,"inc":"b1"})"
      "\n";
  EXPECT_THAT(verdict(kBroker, send +
                                   R"({"ev":"close_consumer","cnx":"c1","consumer":0})" "\n"
                                   R"({"ev":"consumer_removed","consumer":0,"inc":"b1"})" "\n"),
              IsEmpty());
  // A broker that keeps the consumer and sends to it again.
  EXPECT_THAT(verdict(kBroker, send +
                                   R"({"ev":"send","consumer":0,"inc":"b1","dispatcher":"persistent_shared","entries":[)"
                                   R"({"cmd":2,"batch_size":1,"admitted":true,"p":1}],"consumer_debit":1,"dispatcher_debit":1})" "\n"
                                   R"({"ev":"message","cnx":"c1","consumer":0,"cmd":2,"message_permits":1})" "\n"),
              Contains(RuleId::kB11));
}

// Flow 100; a partial batch of 10 with indexes {0,2,5} (P = 3), a batch of 10 refused by
// pending-ack admission, a partial batch whose ack_set is empty (P = 0): total 3, available 97.
TEST(UpstreamConsumerTest, testSendMessagesFinalizesPermitsAfterPendingAckAdmission) {
  const std::string entries =
      R"({"ev":"send","consumer":0,"dispatcher":"persistent_shared","entries":[)"
      R"({"cmd":1,"batch_size":10,"ack_set":[37],"admitted":true,"p":3},)"
      R"({"cmd":2,"batch_size":10,"admitted":false},)"
      R"({"cmd":3,"batch_size":10,"ack_set":[0],"admitted":true}],)";
  const std::string message =
      R"({"ev":"message","cnx":"c1","consumer":0,"cmd":1,"message_permits":3,"ack_set":[37],"batch_size":10})" "\n";
  EXPECT_THAT(verdict(kBroker, entries + R"("consumer_debit":3,"dispatcher_debit":3})" "\n" + message),
              IsEmpty());
  EXPECT_THAT(verdict(kBroker, entries + R"("consumer_debit":20,"dispatcher_debit":20})" "\n" + message),
              Contains(RuleId::kB4));
}

// A partial batch of 10 with {0,2,5} and a whole batch of 4: P = 3 and 4, total 7, whatever
// happens to the sender's inputs afterwards.
TEST(UpstreamConsumerTest, testFinalizedPermitsOutliveRecycledSenderInputs) {
  const std::string send =
      R"({"ev":"send","consumer":0,"dispatcher":"persistent_shared","entries":[)"
      R"({"cmd":1,"batch_size":10,"ack_set":[37],"admitted":true,"p":3},)"
      R"({"cmd":2,"batch_size":4,"admitted":true,"p":4}],"consumer_debit":7,"dispatcher_debit":7})" "\n";
  EXPECT_THAT(verdict(kBroker, send +
                                   R"({"ev":"message","cnx":"c1","consumer":0,"cmd":1,"message_permits":3})" "\n"
                                   R"({"ev":"message","cnx":"c1","consumer":0,"cmd":2,"message_permits":4})" "\n"),
              IsEmpty());
  // Serialized from the recycled inputs (B = 1) instead of the finalized values.
  EXPECT_THAT(verdict(kBroker, send +
                                   R"({"ev":"message","cnx":"c1","consumer":0,"cmd":1,"message_permits":1})" "\n"),
              Contains(RuleId::kE4));
}

// ---- ConsumerImplTest ----

// A checksum failure of a command with message_permits 10 returns all 10.
TEST(UpstreamConsumerImplTest, testChecksumFailureReturnsCommandPermits) {
  const std::string failed =
      R"({"ev":"recv","inc":1,"cmd":1,"message_permits":10})" "\n"
      R"({"ev":"resolve","cmd":1,"p":10,"source":"explicit"})" "\n"
      R"({"ev":"corrupt","cmd":1,"stage":"checksum"})" "\n";
  EXPECT_THAT(verdict(kClient, failed + R"({"ev":"settle","cmd":1,"n":10})" "\n"), IsEmpty());
  EXPECT_THAT(verdict(kClient, failed + R"({"ev":"settle","cmd":1,"n":1})" "\n"),
              Contains(RuleId::kC7));
}

// message_permits 0 closes the source connection, with no credit.
TEST(UpstreamConsumerImplTest, testMalformedExplicitPermitsCloseSourceIncarnationWithoutCredit) {
  const std::string recv = R"({"ev":"recv","inc":1,"cmd":1,"message_permits":0})" "\n";
  EXPECT_THAT(verdict(kClient, recv + R"({"ev":"protocol_error","cnx":"c1","reason":"message_permits 0"})" "\n"),
              IsEmpty());
  EXPECT_THAT(verdict(kClient, recv + R"({"ev":"settle","cmd":1,"n":1})" "\n"),
              Contains(RuleId::kC4));
}

// Explicit 3 with ack_set bits {0,2,4} and B = 10 gives 3; an old broker's ack_set {0,2,3,5}
// gives 4; no ack_set gives B = 10.
TEST(UpstreamConsumerImplTest, testGetMessagePermitsUsesCommandValueAndFallsBack) {
  EXPECT_THAT(verdict(kClient,
                      R"({"ev":"recv","inc":1,"cmd":1,"message_permits":3,"ack_set":[21]})" "\n"
                      R"({"ev":"metadata","cmd":1,"batch_size":10})" "\n"
                      R"({"ev":"resolve","cmd":1,"p":3,"source":"explicit"})" "\n"
                      R"({"ev":"recv","inc":1,"cmd":2,"ack_set":[45]})" "\n"
                      R"({"ev":"metadata","cmd":2,"batch_size":10})" "\n"
                      R"({"ev":"resolve","cmd":2,"p":4,"source":"ack_set"})" "\n"
                      R"({"ev":"recv","inc":1,"cmd":3})" "\n"
                      R"({"ev":"metadata","cmd":3,"batch_size":10})" "\n"
                      R"({"ev":"resolve","cmd":3,"p":10,"source":"batch"})" "\n"),
              IsEmpty());
  EXPECT_THAT(verdict(kClient,
                      R"({"ev":"recv","inc":1,"cmd":2,"ack_set":[45]})" "\n"
                      R"({"ev":"metadata","cmd":2,"batch_size":10})" "\n"
                      R"({"ev":"resolve","cmd":2,"p":10,"source":"batch"})" "\n"),
              Contains(RuleId::kC1));
}

// ---- MessagePermitAccountingTest ----

// A budget of 2: claim, restore, claim; the terminal transition returns 1, a second one 0.
TEST(UpstreamMessagePermitAccountingTest, testBudgetTracksClaimsAndRestores) {
  const std::string claims =
      R"({"ev":"recv","inc":1,"cmd":1,"message_permits":2})" "\n"
      R"({"ev":"metadata","cmd":1,"batch_size":2})" "\n"
      R"({"ev":"claim","cmd":1,"msg":"m0","index":0})" "\n"
      R"({"ev":"restore","cmd":1,"msg":"m0"})" "\n"
      R"({"ev":"claim","cmd":1,"msg":"m1","index":0})" "\n";
  EXPECT_THAT(verdict(kClient, claims + R"({"ev":"settle","cmd":1,"n":1})" "\n"
                                        R"({"ev":"settle","cmd":1,"n":0})" "\n"),
              IsEmpty());
  // Returning 2 with one unit still handed off gives back more than P (K7).
  EXPECT_THAT(verdict(kClient, claims + R"({"ev":"settle","cmd":1,"n":2})" "\n"),
              Contains(RuleId::kK7));
}

// ---- CorruptedBatchMessagePermitTest ----

// A batch of 5 whose payload holds 2 messages: both are handed on, the parse failure returns
// the other 3, and the same consumer keeps receiving (nothing is closed).
TEST(UpstreamCorruptedBatchMessagePermitTest,
     testSharedConsumerReturnsOnlyUnparsedRemainderForMalformedBatch) {
  const std::string failed =
      R"({"ev":"recv","inc":1,"cmd":1,"message_permits":5})" "\n"
      R"({"ev":"metadata","cmd":1,"batch_size":5})" "\n"
      R"({"ev":"claim","cmd":1,"msg":"m0","index":0})" "\n"
      R"({"ev":"claim","cmd":1,"msg":"m1","index":1})" "\n"
      R"({"ev":"corrupt","cmd":1,"stage":"batch","index":2})" "\n";
  EXPECT_THAT(verdict(kClient, failed + R"({"ev":"settle","cmd":1,"n":3})" "\n"
                                        R"({"ev":"msg_return","msg":"m0"})" "\n"
                                        R"({"ev":"msg_return","msg":"m1"})" "\n"),
              IsEmpty());
  EXPECT_THAT(verdict(kClient, failed + R"({"ev":"protocol_error","cnx":"c1","reason":"corrupt batch"})" "\n"),
              Contains(RuleId::kC5));
}

// Three corrupted batches of 10 (checksum), each returning 10; the consumer keeps receiving.
TEST(UpstreamCorruptedBatchMessagePermitTest,
     testSharedConsumerReturnsAllPermitsForRepeatedCorruptedBatches) {
  std::string good;
  for (int cmd = 1; cmd <= 3; ++cmd) {
    const std::string c = std::to_string(cmd);
    good += R"({"ev":"recv","inc":1,"cmd":)" + c + R"(,"message_permits":10})" "\n"
            R"({"ev":"corrupt","cmd":)" + c + R"(,"stage":"checksum"})" "\n"
            R"({"ev":"settle","cmd":)" + c + R"(,"n":10})" "\n"
            R"({"ev":"flow","cnx":"c1","consumer":0,"permits":10,"inc":1})" "\n";
  }
  EXPECT_THAT(verdict(kClient, good), IsEmpty());
  EXPECT_THAT(verdict(kClient,
                      R"({"ev":"recv","inc":1,"cmd":1,"message_permits":10})" "\n"
                      R"({"ev":"corrupt","cmd":1,"stage":"checksum"})" "\n"
                      R"({"ev":"protocol_error","cnx":"c1","reason":"checksum"})" "\n"),
              Contains(RuleId::kC5));
}

}  // namespace
}  // namespace permitcheck::trace
