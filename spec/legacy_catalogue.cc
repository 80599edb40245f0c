#include "spec/legacy_catalogue.h"

#include <utility>

#include "spec/client_command.h"
#include "spec/finalize.h"
#include "spec/permit_state.h"

namespace permitcheck::spec {
namespace {

const Ruleset& legacy() { return ruleset(RulesetId::kLegacy); }
const Ruleset& rev_d() { return ruleset(RulesetId::kRevD); }

// Appends events to a trace under construction.
class Trace {
 public:
  Trace& add(Event e) {
    events_.push_back(std::move(e));
    return *this;
  }
  Trace& add_all(const std::vector<Event>& es) {
    events_.insert(events_.end(), es.begin(), es.end());
    return *this;
  }
  // A permit state opened on `cnx`, its Subscribe succeeded, and the initial grant written.
  Trace& subscribed(std::uint64_t inc, std::string cnx, std::int64_t q) {
    add(IncOpen{.inc = Id::number(inc), .cnx = Id::text(cnx), .consumer = 0});
    add(IncFlowEnabled{.inc = Id::number(inc)});
    return add(Flow{.cnx = Id::text(std::move(cnx)), .consumer = 0, .permits = q,
                    .inc = Id::number(inc)});
  }
  // One command handled under `rules`, every handed-off message then consumed.
  Trace& handled(const Ruleset& rules, const CommandSituation& s) {
    const CommandRun run = handle_command(rules, s);
    add_all(run.events);
    return add_all(returns_of(run));
  }
  std::vector<Event> take() { return std::move(events_); }

 private:
  std::vector<Event> events_;
};

TraceHeader client_header(std::int64_t q, std::int64_t t) {
  return TraceHeader{.source = TraceSource::kClient, .q = q, .t = t};
}

// L1-L5, L9, L10: one command on a fresh incarnation, handled by each ruleset's client.
CatalogueEntry one_command(std::string_view id, std::string_view situation,
                           const CommandSituation& s, RuleId rule, bool deviation,
                           std::int64_t legacy_value, std::int64_t correct_value,
                           std::string_view effect) {
  const std::int64_t q = 1000;
  CatalogueEntry e{.id = id,
                   .situation = situation,
                   .header = client_header(q, default_threshold(q)),
                   .rev_d_rule = rule,
                   .rev_d_deviation = deviation,
                   .legacy_value = legacy_value,
                   .correct_value = correct_value,
                   .effect = effect};
  e.legacy = Trace().subscribed(1, "c1", q).handled(legacy(), s).take();
  e.correct = Trace().subscribed(1, "c1", q).handled(rev_d(), s).take();
  return e;
}

CommandSituation batch(std::uint64_t p, std::int64_t b) {
  return CommandSituation{.inc = Id::number(1), .cmd = Id::number(1), .cnx = Id::text("c1"),
                          .message_permits = p, .batch_size = b, .batched = b > 1};
}

// L6, L7: a message handed off before its incarnation was replaced, consumed afterwards.
CatalogueEntry late_return(std::string_view id, std::string_view situation, bool same_connection,
                           std::string_view effect) {
  const std::int64_t q = 4;
  const std::string next_cnx = same_connection ? "c1" : "c2";
  // The prefix under `rules`: hand-off, replacement; returns the handed-off message.
  auto prefix = [&](const Ruleset& rules, Trace& t) {
    const CommandRun run = handle_command(rules, batch(1, 1));
    t.subscribed(1, "c1", q).add_all(run.events);
    if (same_connection) {
      t.add(CloseConsumer{.cnx = Id::text("c1"), .consumer = 0});
      t.add(IncClose{.inc = Id::number(1), .reason = CloseReason::kCloseConsumer});
    } else {
      t.add(Disconnect{.cnx = Id::text("c1")});
      t.add(IncClose{.inc = Id::number(1), .reason = CloseReason::kDisconnect});
      t.add(Connect{.cnx = Id::text(next_cnx)});
    }
    t.subscribed(2, next_cnx, q);
    return run.handed_off.front();
  };
  CatalogueEntry e{.id = id,
                   .situation = situation,
                   .header = client_header(q, 2),
                   .rev_d_rule = RuleId::kE3,
                   .rev_d_deviation = false,
                   .legacy_value = 1,
                   .correct_value = 0,
                   .effect = effect};
  // Legacy credits the consumer object, now the replacement (ReturnScope::kCurrentConsumer).
  Trace legacy_trace;
  const Id old_msg = prefix(legacy(), legacy_trace);
  e.legacy = legacy_trace.add(MsgReturn{.msg = old_msg}).take();
  Trace correct_trace;
  const Id dropped = prefix(rev_d(), correct_trace);
  e.correct = correct_trace.add(Drop{.msg = dropped, .n = 1}).take();
  return e;
}

// L8: two entries of 10, pending-ack admission rejects the second.
CatalogueEntry rejected_entry() {
  const std::vector<SendEntry> entries = {{.batch_size = 10, .admitted = true},
                                          {.batch_size = 10, .admitted = false}};
  auto send = [&](const Ruleset& rules) {
    const SendResult r = finalize_permits(rules, DispatcherKind::kPersistentShared, entries);
    Send s{.consumer = 0,
           .dispatcher = DispatcherKind::kPersistentShared,
           .consumer_debit = r.consumer_debit,
           .dispatcher_debit = r.dispatcher_debit};
    for (std::size_t i = 0; i < entries.size(); ++i) {
      SentEntry se{.cmd = Id::number(i + 1), .entry = entries[i]};
      for (const FinalizedCommand& f : r.commands) {
        if (f.entry == i) se.p = f.p;
      }
      s.entries.push_back(std::move(se));
    }
    return std::vector<Event>{s};
  };
  return CatalogueEntry{.id = "L8",
                        .situation = "two entries of 10, pending-ack admission rejects the 2nd",
                        .header = TraceHeader{.source = TraceSource::kBroker},
                        .legacy = send(legacy()),
                        .correct = send(rev_d()),
                        .rev_d_rule = RuleId::kB4,
                        .rev_d_deviation = false,
                        .legacy_value = 20,
                        .correct_value = 10,
                        .effect = "consumer and dispatcher debited 20 for one command of 10: "
                                  "10 permits permanently lost"};
}

// L11: the old incarnation's queued Flow runs after the replacement's Subscribe.
CatalogueEntry late_flow() {
  const std::int64_t q = 4;
  const std::int64_t t = 2;
  // Two returns reach T, so a Flow of 2 is queued; then the consumer is replaced on c1.
  auto prefix = [&](const Ruleset& rules) {
    Trace tr;
    tr.subscribed(1, "c1", q);
    for (std::uint64_t cmd = 1; cmd <= 2; ++cmd) {
      CommandSituation s = batch(1, 1);
      s.cmd = Id::number(cmd);
      tr.handled(rules, s);
    }
    tr.add(CloseConsumer{.cnx = Id::text("c1"), .consumer = 0});
    tr.add(IncClose{.inc = Id::number(1), .reason = CloseReason::kCloseConsumer});
    tr.add(IncOpen{.inc = Id::number(2), .cnx = Id::text("c1"), .consumer = 0});
    return tr;
  };
  auto replacement_enabled = [&](Trace tr) {
    tr.add(IncFlowEnabled{.inc = Id::number(2)});
    return tr.add(Flow{.cnx = Id::text("c1"), .consumer = 0, .permits = q, .inc = Id::number(2)})
        .take();
  };
  CatalogueEntry e{.id = "L11",
                   .situation = "queued Flow of the old incarnation runs after the replacement's "
                                "Subscribe on the same connection",
                   .header = client_header(q, t),
                   .rev_d_rule = RuleId::kN6,
                   .rev_d_deviation = false,
                   .legacy_value = t,
                   .correct_value = 0,
                   .effect = "the old credit is written and credited to the new consumer: "
                             "over-grant"};
  e.legacy = replacement_enabled(prefix(legacy()).add(
      Flow{.cnx = Id::text("c1"), .consumer = 0, .permits = t, .inc = Id::number(1)}));
  e.correct = replacement_enabled(prefix(rev_d()).add(Drop{.n = t}));
  return e;
}

}  // namespace

std::vector<CatalogueEntry> legacy_catalogue() {
  std::vector<CatalogueEntry> out;

  CommandSituation l1 = batch(100, 100);
  l1.early_failure = FailureStage::kChecksum;
  out.push_back(one_command("L1", "checksum failure, P = 100", l1, RuleId::kC7, false, 1, 100,
                            "99 permits lost; repeated, the consumer stalls"));

  CommandSituation l2 = batch(10, 10);
  l2.early_failure = FailureStage::kMetadata;
  out.push_back(one_command("L2", "metadata parse failure, P = 10", l2, RuleId::kC7, false, 1, 10,
                            "9 permits lost"));

  CommandSituation l3 = batch(10, 10);
  l3.early_failure = FailureStage::kDecompress;
  out.push_back(one_command("L3", "decompression failure, P = 10 (B known)", l3, RuleId::kC7,
                            false, 1, 10, "9 permits lost"));

  CommandSituation l4 = batch(10, 10);
  l4.fates = {IndexFate::kDeliver, IndexFate::kDeliver, IndexFate::kDeliver, IndexFate::kDeliver,
              IndexFate::kDuplicate, IndexFate::kParseFails};
  out.push_back(one_command("L4", "batch parse fails after D=4 handed off and K=1 skipped, P = 10",
                            l4, RuleId::kC7, false, 6, 10, "4 permits lost"));

  CommandSituation l5 = batch(3, 8);
  l5.ack_set = AckSet::from_indexes({0, 2, 5});
  l5.fates.assign(8, IndexFate::kDeliver);
  l5.fates[6] = IndexFate::kParseFails;
  out.push_back(one_command("L5", "partial batch P=3 of B=8, all 3 delivered, parse fails on "
                            "index 6 (not deliverable)", l5, RuleId::kK7, false, 4, 3,
                            "1 permit over-granted"));

  out.push_back(late_return("L6", "stale-epoch discard after hand-off, consumer reconnected on a "
                            "new connection", false,
                            "credit crosses into the replacement; prefetch gauges leak"));
  out.push_back(late_return("L7", "consumer recreated on the same pooled connection; old message "
                            "consumed later", true, "over-grant to the replacement"));

  out.push_back(rejected_entry());

  CommandSituation l9 = batch(1, 1);
  l9.fates = {IndexFate::kBeforeStart};
  out.push_back(one_command("L9", "non-batched message before startMessageId", l9, RuleId::kK4,
                            false, 0, 1, "1 permit lost per message"));

  CommandSituation l10 = batch(3, 10);
  l10.ack_set = AckSet::from_indexes({0, 4, 9});
  l10.path = PayloadPath::kCryptoDiscard;
  out.push_back(one_command("L10", "crypto DISCARD, partial redelivery B = 10, P = 3", l10,
                            RuleId::kX2, true, 10, 3,
                            "7 permits over-granted (accepted under rev-d as X2)"));

  out.push_back(late_flow());
  return out;
}

std::optional<RuleId> legacy_row_rule(std::string_view id) {
  for (const CatalogueEntry& e : legacy_catalogue()) {
    if (e.id == id) return e.rev_d_rule;
  }
  return std::nullopt;
}

}  // namespace permitcheck::spec
