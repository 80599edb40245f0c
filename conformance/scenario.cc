#include "conformance/scenario.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "conformance/internal/process.h"

namespace permitcheck::conformance {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr ScenarioInfo kScenarios[] = {
    {ScenarioKind::kCompleteBatches, "complete_batches", spec::RuleId::kE1,
     "complete batches and single messages; every permit comes back"},
    {ScenarioKind::kPartialBatches, "partial_batches", spec::RuleId::kE2,
     "partial redeliveries (ack_set, sparse and dense): P = deliverable count, not B"},
    {ScenarioKind::kCorruptChecksum, "corrupt_checksum", spec::RuleId::kC7,
     "entries with a corrupt crc32c must still settle P"},
    {ScenarioKind::kUnreadableMetadata, "unreadable_metadata", spec::RuleId::kC7,
     "entries whose metadata does not parse must still settle P"},
    {ScenarioKind::kTruncatedBatch, "truncated_batch", spec::RuleId::kC7,
     "a batch cut inside a message: the command settles what it still owns"},
    {ScenarioKind::kInconsistentBatch, "inconsistent_batch", spec::RuleId::kC5,
     "a payload holding more messages than B: at most P hand-offs, settle P"},
    {ScenarioKind::kCloseConsumer, "close_consumer", spec::RuleId::kN2,
     "CLOSE_CONSUMER mid-stream then resubscribe: a fresh permit state"},
    {ScenarioKind::kReconnect, "reconnect", spec::RuleId::kN2,
     "connection drop and reconnect: old credit never reaches the new incarnation"},
    {ScenarioKind::kUnknownConsumer, "unknown_consumer", spec::RuleId::kE3,
     "messages for a consumer id never subscribed are not credited to the real one"},
    {ScenarioKind::kNegativeAck, "negative_ack", spec::RuleId::kM1,
     "negative acknowledgements and redelivery"},
    {ScenarioKind::kSlowConsumer, "slow_consumer", spec::RuleId::kE6,
     "more than Q messages consumed slowly: batch debt, back-pressure, no stall"},
};

bool is_early_failure(EntryFault f) {
  return f == EntryFault::kChecksum || f == EntryFault::kMetadata;
}

spec::AckSet ack_set_of(const EntrySpec& e) {
  if (e.cleared.empty() || !e.batched) return spec::AckSet();
  std::vector<std::int64_t> keep;
  for (std::int64_t i = 0; i < e.batch_size; ++i) {
    if (std::find(e.cleared.begin(), e.cleared.end(), i) == e.cleared.end()) keep.push_back(i);
  }
  return spec::AckSet::from_indexes(keep);
}

std::string describe_entry(const EntrySpec& e) {
  std::string s = e.batched ? absl::StrCat("b", e.batch_size) : "single";
  if (!e.cleared.empty()) absl::StrAppend(&s, "-cleared{", absl::StrJoin(e.cleared, ","), "}");
  if (e.fault != EntryFault::kNone) {
    absl::StrAppend(&s, "!", std::string(entry_fault_name(e.fault)));
    if (e.fault == EntryFault::kTruncatedBatch) absl::StrAppend(&s, "@", e.truncate_at);
    if (e.fault == EntryFault::kExtraMessages) absl::StrAppend(&s, "+", e.extra_messages);
  }
  return s;
}

// ---- generators ----

rc::Gen<EntrySpec> gen_single() { return rc::gen::just(EntrySpec{}); }

rc::Gen<EntrySpec> gen_complete_batch(std::int64_t min_b, std::int64_t max_b) {
  return rc::gen::map(rc::gen::inRange<std::int64_t>(min_b, max_b + 1), [](std::int64_t b) {
    return EntrySpec{.batch_size = b, .batched = true};
  });
}

rc::Gen<EntrySpec> gen_complete() {
  return rc::gen::oneOf(gen_single(), gen_complete_batch(2, 8));
}

// A partial redelivery: some indexes of a batch were acknowledged before (sparse or dense).
rc::Gen<EntrySpec> gen_partial() {
  return rc::gen::mapcat(rc::gen::inRange<std::int64_t>(2, 11), [](std::int64_t b) {
    return rc::gen::map(
        rc::gen::container<std::vector<bool>>(static_cast<std::size_t>(b),
                                              rc::gen::arbitrary<bool>()),
        [b](const std::vector<bool>& keep) {
          EntrySpec e{.batch_size = b, .batched = true};
          for (std::int64_t i = 0; i < b; ++i) {
            if (!keep[static_cast<std::size_t>(i)]) e.cleared.push_back(i);
          }
          if (static_cast<std::int64_t>(e.cleared.size()) == b) e.cleared.erase(e.cleared.begin());
          if (e.cleared.empty()) e.cleared.push_back(b - 1);
          return e;
        });
  });
}

rc::Gen<EntrySpec> gen_faulty(EntryFault fault) {
  return rc::gen::mapcat(rc::gen::inRange<std::int64_t>(2, 9), [fault](std::int64_t b) {
    return rc::gen::map(
        rc::gen::pair(rc::gen::inRange<int>(0, static_cast<int>(b)), rc::gen::inRange<int>(1, 4)),
        [fault, b](const std::pair<int, int>& p) {
          EntrySpec e{.batch_size = b, .batched = true, .fault = fault};
          if (fault == EntryFault::kTruncatedBatch) e.truncate_at = p.first;
          if (fault == EntryFault::kExtraMessages) e.extra_messages = p.second;
          return e;
        });
  });
}

// Entries where at least the last one carries the fault.
rc::Gen<std::vector<EntrySpec>> gen_with_fault(EntryFault fault) {
  return rc::gen::map(
      rc::gen::pair(rc::gen::container<std::vector<EntrySpec>>(
                        rc::gen::oneOf(gen_complete(), gen_faulty(fault))),
                    gen_faulty(fault)),
      [](std::pair<std::vector<EntrySpec>, EntrySpec> p) {
        std::vector<EntrySpec> v = std::move(p.first);
        if (v.size() > 3) v.resize(3);
        v.push_back(std::move(p.second));
        return v;
      });
}

rc::Gen<std::vector<EntrySpec>> gen_some(rc::Gen<EntrySpec> g, std::size_t max) {
  return rc::gen::map(rc::gen::nonEmpty(rc::gen::container<std::vector<EntrySpec>>(g)),
                      [max](std::vector<EntrySpec> v) {
                        if (v.size() > max) v.resize(max);
                        return v;
                      });
}

}  // namespace

std::span<const ScenarioInfo> all_scenarios() { return kScenarios; }

const ScenarioInfo& scenario_info(ScenarioKind kind) {
  for (const ScenarioInfo& s : kScenarios) {
    if (s.kind == kind) return s;
  }
  return kScenarios[0];
}

std::optional<ScenarioKind> parse_scenario(std::string_view name) {
  for (const ScenarioInfo& s : kScenarios) {
    if (s.name == name) return s.kind;
  }
  return std::nullopt;
}

std::string describe(const ScenarioParams& p) {
  std::vector<std::string> entries;
  for (const EntrySpec& e : p.entries) entries.push_back(describe_entry(e));
  std::string s = absl::StrCat(std::string(scenario_info(p.kind).name), " ",
                               p.send_field ? "new-broker" : "old-broker", " delay=", p.delay_ms,
                               "ms");
  if (p.nack_every > 0) absl::StrAppend(&s, " nack-every=", p.nack_every);
  absl::StrAppend(&s, " entries=[", absl::StrJoin(entries, " "), "]");
  if (p.kind == ScenarioKind::kCloseConsumer || p.kind == ScenarioKind::kReconnect ||
      p.kind == ScenarioKind::kUnknownConsumer) {
    absl::StrAppend(&s, " disrupt-after=", p.disrupt_after);
  }
  return s;
}

rc::Gen<ScenarioParams> gen_scenario(ScenarioKind kind) {
  rc::Gen<std::vector<EntrySpec>> entries = gen_some(gen_complete(), 4);
  switch (kind) {
    case ScenarioKind::kCompleteBatches: break;
    case ScenarioKind::kPartialBatches:
      entries = gen_some(rc::gen::oneOf(gen_partial(), gen_partial(), gen_complete()), 4);
      break;
    case ScenarioKind::kCorruptChecksum: entries = gen_with_fault(EntryFault::kChecksum); break;
    case ScenarioKind::kUnreadableMetadata: entries = gen_with_fault(EntryFault::kMetadata); break;
    case ScenarioKind::kTruncatedBatch: entries = gen_with_fault(EntryFault::kTruncatedBatch); break;
    case ScenarioKind::kInconsistentBatch: entries = gen_with_fault(EntryFault::kExtraMessages); break;
    case ScenarioKind::kCloseConsumer:
    case ScenarioKind::kReconnect:
    case ScenarioKind::kUnknownConsumer:
      entries = gen_some(gen_complete(), 5);
      break;
    case ScenarioKind::kNegativeAck: entries = gen_some(gen_complete(), 4); break;
    case ScenarioKind::kSlowConsumer:
      entries = rc::gen::map(rc::gen::pair(gen_some(gen_complete_batch(2, 6), 4),
                                           rc::gen::inRange<int>(4, 7)),
                             [](std::pair<std::vector<EntrySpec>, int> p) {
                               // enough entries to exceed Q = 10 with the shrunk batches
                               std::vector<EntrySpec> v = p.first;
                               while (static_cast<int>(v.size()) < p.second) {
                                 v.push_back(EntrySpec{.batch_size = 4, .batched = true});
                               }
                               return v;
                             });
      break;
  }
  // new broker first when shrinking: gen::arbitrary<bool> shrinks to false.
  rc::Gen<bool> old_broker = rc::gen::arbitrary<bool>();
  rc::Gen<int> delay = kind == ScenarioKind::kSlowConsumer
                           ? rc::gen::element(40, 80)
                           : rc::gen::element(0, 0, 15);
  rc::Gen<int> nack = kind == ScenarioKind::kNegativeAck ? rc::gen::inRange(2, 4)
                                                         : rc::gen::just(0);
  return rc::gen::map(
      rc::gen::tuple(entries, old_broker, delay, nack, rc::gen::inRange(0, 4)),
      [kind](std::tuple<std::vector<EntrySpec>, bool, int, int, int> t) {
        ScenarioParams p;
        p.kind = kind;
        p.entries = std::move(std::get<0>(t));
        p.send_field = !std::get<1>(t);
        p.delay_ms = std::get<2>(t);
        p.nack_every = std::get<3>(t);
        p.disrupt_after = std::min<int>(std::get<4>(t), static_cast<int>(p.entries.size()));
        if ((kind == ScenarioKind::kCloseConsumer || kind == ScenarioKind::kReconnect) &&
            p.disrupt_after == 0) {
          p.disrupt_after = 1;  // something delivered before the disruption
        }
        return p;
      });
}

std::string expand_command(const ClientSpec& client, const ScenarioParams& params,
                           const std::string& url) {
  return absl::StrReplaceAll(
      client.command, {{"{url}", url},
                       {"{topic}", "persistent://public/default/permitcheck"},
                       {"{subscription}", "permitcheck-sub"},
                       {"{q}", absl::StrCat(client.q)},
                       {"{delay_ms}", absl::StrCat(params.delay_ms)},
                       {"{nack_every}", absl::StrCat(params.nack_every)}});
}

ScenarioOutcome run_scenario(const ClientSpec& client, const ScenarioParams& params) {
  const auto start = Clock::now();
  const auto deadline = start + client.timeout;
  ScenarioOutcome out;
  out.params = params;
  out.header = spec::TraceHeader{.source = spec::TraceSource::kBroker,
                                 .ruleset = spec::RulesetId::kRevD,
                                 .q = client.q,
                                 .t = client.t};
  const ScenarioInfo& info = scenario_info(params.kind);

  ConformanceBroker broker(BrokerOptions{.send_message_permits = params.send_field});
  if (absl::Status s = broker.start(); !s.ok()) {
    out.client_failure = absl::StrCat("broker could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }
  static std::atomic<int> run_counter{0};
  const std::string log_path = absl::StrCat(client.log_dir, "/permitcheck-conform-", ::getpid(),
                                            "-", run_counter++, ".log");
  internal::ClientProcess proc;
  proc.keep_log(client.keep_log);
  if (absl::Status s = proc.start(expand_command(client, params, broker.url()), log_path);
      !s.ok()) {
    out.client_failure = absl::StrCat("client could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }

  // A bounded wait that also gives up when the client process is gone.
  auto wait = [&](const std::function<bool(const BrokerView&)>& pred, milliseconds max) {
    const auto until = std::min(deadline, Clock::now() + max);
    while (Clock::now() < until) {
      if (broker.wait_until(pred, milliseconds(50))) return true;
      if (!proc.running()) return broker.wait_until(pred, milliseconds(0));
    }
    return false;
  };
  auto idle_for = [](const BrokerView& v, milliseconds d) {
    return Clock::now() - v.last_activity >= d;
  };
  // Quiescence: everything acknowledged and a short silence (a third of the long one), or a
  // long silence.
  const milliseconds quiet = client.idle / 3;
  auto settle = [&] {
    wait([&](const BrokerView& v) {
      return (v.outstanding == 0 && idle_for(v, quiet)) || idle_for(v, client.idle);
    }, client.timeout);
  };
  auto ready = [](int incarnation) {
    return [incarnation](const BrokerView& v) {
      return v.subscribed && v.subscribes >= incarnation && v.flows >= 1;
    };
  };

  if (!wait(ready(1), client.startup)) {
    out.client_never_started = true;
    out.client_failure =
        absl::StrCat("hang or start failure: no Subscribe and Flow within ",
                     client.startup.count(), " ms (",
                     proc.exit_description().value_or("still running"), ")");
  } else {
    std::uint64_t next_entry = 1;
    int incarnation = 1;
    auto deliver_foreign = [&] {
      (void)broker.deliver(Delivery{.entry = 900 + next_entry, .batch_size = 3, .batched = true,
                                    .consumer = params.foreign_consumer});
      (void)broker.deliver(Delivery{.entry = 950 + next_entry, .consumer = params.foreign_consumer});
    };
    auto to_delivery = [](const EntrySpec& e, std::uint64_t id) {
      return Delivery{.entry = id, .batch_size = e.batch_size, .batched = e.batched,
                      .ack_set = ack_set_of(e), .fault = e.fault, .truncate_at = e.truncate_at,
                      .extra_messages = e.extra_messages};
    };
    std::vector<std::pair<std::uint64_t, EntrySpec>> delivered;
    for (std::size_t i = 0; i <= params.entries.size(); ++i) {
      if (static_cast<int>(i) == params.disrupt_after) {
        if (params.kind == ScenarioKind::kCloseConsumer || params.kind == ScenarioKind::kReconnect) {
          settle();
          if (params.kind == ScenarioKind::kCloseConsumer) (void)broker.close_consumer();
          else (void)broker.drop_connection();
          ++incarnation;
          if (!wait(ready(incarnation), client.startup)) break;
        } else if (params.kind == ScenarioKind::kUnknownConsumer) {
          deliver_foreign();
        }
      }
      if (i == params.entries.size()) break;
      if (!wait([](const BrokerView& v) { return v.subscribed && v.available > 0; },
                milliseconds(5000))) {
        break;  // stalled or gone: the quiescence check reports it (E6)
      }
      const std::uint64_t id = next_entry++;
      (void)broker.deliver(to_delivery(params.entries[i], id));
      delivered.emplace_back(id, params.entries[i]);
    }
    if (params.kind == ScenarioKind::kNegativeAck) {
      // Redeliver what the client names; a request without ids (Java's nack on Exclusive and
      // Failover) redelivers every unacknowledged entry. At most three rounds.
      std::size_t handled = 0;
      int handled_all = 0;
      for (int round = 0; round < 3; ++round) {
        settle();
        const BrokerView v = broker.view();
        if (v.redeliver_requests.size() == handled && v.redeliver_all_requests == handled_all) {
          break;
        }
        std::vector<std::uint64_t> ids(v.redeliver_requests.begin() + static_cast<long>(handled),
                                       v.redeliver_requests.end());
        handled = v.redeliver_requests.size();
        if (v.redeliver_all_requests > handled_all) {
          ids.insert(ids.end(), v.unacked_entries.begin(), v.unacked_entries.end());
          handled_all = v.redeliver_all_requests;
        }
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        for (std::uint64_t entry : ids) {
          for (const auto& [id, spec] : delivered) {
            if (id != entry) continue;
            if (!wait([](const BrokerView& w) { return w.subscribed && w.available > 0; },
                      milliseconds(5000))) {
              break;
            }
            Delivery d = to_delivery(spec, id);
            d.redelivery_count = static_cast<std::uint32_t>(round + 1);
            (void)broker.deliver(d);
          }
        }
      }
    }
    settle();
    broker.mark_quiescent();
    const BrokerView v = broker.view();
    out.granted = v.granted;
    out.debited = v.debited;
    out.incarnations = v.subscribes;
    if (!v.subscribed && !proc.crashed()) {
      out.violations.push_back(spec::Finding{
          info.primary, 0,
          absl::StrCat("at quiescence the client has no subscribed consumer (it closed its "
                       "consumer or connection during ", std::string(info.name), ")")});
    }
    for (const std::string& e : v.protocol_errors) {
      out.violations.push_back(spec::Finding{info.primary, 0,
                                             absl::StrCat("client sent a malformed frame: ", e)});
    }
  }
  const bool crashed = proc.crashed();
  const std::optional<std::string> exit = proc.exit_description();
  if (crashed) {
    broker.record_extension("x-client-crashed");
    const BrokerView v = broker.view();
    out.granted = v.granted;
    out.debited = v.debited;
    out.incarnations = v.subscribes;
  }
  proc.stop(milliseconds(500));
  broker.stop();
  out.client_log_tail = proc.log_tail(2000);
  out.events = broker.trace();
  if (crashed && !out.client_failure) {
    out.client_failure = absl::StrCat("crashed: ", exit.value_or("ended"));
  }

  spec::MonitorReport report = spec::check_trace(out.header, out.events);
  // Lines of monitor findings are file lines; ours (crash, no consumer) point past the end.
  const std::uint64_t end_line = out.events.size() + 2;
  for (spec::Finding& f : out.violations) f.line = end_line;
  out.deviations = report.deviations;

  // Field absent on the client side (old broker, or an old client that ignores it): a failure
  // before metadata of a complete batch may return 1 (X1), of a partial one every ack_set bit
  // (X6). A quiescence shortfall of exactly that much is the known deviation, not E5/E6.
  std::int64_t allowance = 0;
  spec::RuleId excuse = spec::RuleId::kX1;
  if (!params.send_field || !client.knows_message_permits) {
    for (const EntrySpec& e : params.entries) {
      if (!is_early_failure(e.fault)) continue;
      const spec::AckSet a = ack_set_of(e);
      const std::int64_t p = a.absent() ? (e.batched ? e.batch_size : 1) : a.count_below(e.batch_size);
      const std::int64_t fallback = a.absent() ? 1 : a.count_all();
      if (!a.absent()) excuse = spec::RuleId::kX6;
      allowance += p - fallback;
    }
  }
  bool excused = false;
  if (allowance > 0 && client.t) {
    const std::int64_t accumulator = client.q - (out.granted - out.debited) - allowance;
    excused = accumulator >= 0 && accumulator < *client.t;
  }
  for (spec::Finding& f : report.violations) {
    if (excused && (f.rule == spec::RuleId::kE5 || f.rule == spec::RuleId::kE6)) {
      f.explanation = absl::StrCat(
          f.explanation, "; explained by known deviation ", std::string(spec::rule_name(excuse)), ": ",
          allowance, " permit(s) of early payload failures returned as the field-absent "
          "fallback (", client.knows_message_permits ? "old broker" : "old client", ")");
      out.deviations.push_back(f);
      out.deviations.back().rule = excuse;
    } else {
      out.violations.push_back(f);
    }
  }
  if (out.client_failure && !out.client_never_started) {
    out.violations.push_back(spec::Finding{
        info.primary, end_line,
        absl::StrCat("client ", *out.client_failure, " during ", std::string(info.name),
                     " (its incarnation was debited ", out.debited, " of ", out.granted,
                     " granted; nothing more came back)")});
  }
  std::stable_sort(out.violations.begin(), out.violations.end(),
                   [](const spec::Finding& a, const spec::Finding& b) { return a.line < b.line; });
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace permitcheck::conformance
