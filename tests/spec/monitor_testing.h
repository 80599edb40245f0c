// Shared helpers of the spec module's tests (tests/spec/*_test.cc): the rulesets, headers, a
// trace builder, event shorthands and assertions on findings. The sources are compiled in unity
// batches (tests/CMakeLists.txt): a helper two of them need lives here, not in each one's
// anonymous namespace.
#ifndef PERMITCHECK_TESTS_SPEC_MONITOR_TESTING_H_
#define PERMITCHECK_TESTS_SPEC_MONITOR_TESTING_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/finalize.h"
#include "spec/monitor.h"
#include "spec/ruleset.h"

namespace permitcheck::spec::monitor_testing {


using ::testing::Contains;
using ::testing::Each;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr std::uint64_t kTwoTo31 = std::uint64_t{1} << 31;
constexpr std::uint64_t kTwoTo32Minus1 = (std::uint64_t{1} << 32) - 1;

inline const Ruleset& rev_d() { return ruleset(RulesetId::kRevD); }
inline const Ruleset& legacy() { return ruleset(RulesetId::kLegacy); }

inline Id n(std::uint64_t v) { return Id::number(v); }
inline Id s(std::string v) { return Id::text(std::move(v)); }

inline TraceHeader header(TraceSource source, std::optional<std::int64_t> q, std::optional<std::int64_t> t,
                   RulesetId rules = RulesetId::kRevD) {
  return TraceHeader{.source = source, .ruleset = rules, .q = q, .t = t};
}
inline TraceHeader client(std::optional<std::int64_t> q = 4, std::optional<std::int64_t> t = 2,
                   RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kClient, q, t, rules);
}
inline TraceHeader wire(std::optional<std::int64_t> q = 4, std::optional<std::int64_t> t = 2,
                 RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kWire, q, t, rules);
}
inline TraceHeader model(std::optional<std::int64_t> q, std::optional<std::int64_t> t,
                  RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kModel, q, t, rules);
}
inline TraceHeader broker(RulesetId rules = RulesetId::kRevD) {
  return header(TraceSource::kBroker, std::nullopt, std::nullopt, rules);
}

// A trace under construction.
class Trace {
 public:
  Trace& add(Event e) {
    events_.push_back(std::move(e));
    return *this;
  }
  // Client accounting: permit state `inc` opened on (cnx, consumer), Flow-enabled, initial grant q.
  Trace& subscribed(std::uint64_t inc, std::int64_t q, std::string cnx = "c1",
                    std::uint64_t consumer = 0) {
    add(IncOpen{.inc = n(inc), .cnx = s(cnx), .consumer = consumer});
    add(IncFlowEnabled{.inc = n(inc)});
    return add(Flow{.cnx = s(std::move(cnx)), .consumer = consumer, .permits = q, .inc = n(inc)});
  }
  // Wire: connect, subscribe, subscribe_ok and (if given) the first Flow.
  Trace& wire_subscribed(std::optional<std::int64_t> first_flow, std::string cnx = "c1",
                         std::uint64_t consumer = 0) {
    add(Connect{.cnx = s(cnx)});
    add(Subscribe{.cnx = s(cnx), .consumer = consumer});
    add(SubscribeOk{.cnx = s(cnx), .consumer = consumer});
    if (first_flow) add(Flow{.cnx = s(cnx), .consumer = consumer, .permits = *first_flow});
    return *this;
  }
  const std::vector<Event>& events() const { return events_; }

 private:
  std::vector<Event> events_;
};

inline Message message(std::uint64_t cmd, std::optional<std::uint64_t> mp, AckSet ack = {},
                std::optional<std::int64_t> batch_size = std::nullopt, std::string cnx = "c1") {
  return Message{.cnx = s(std::move(cnx)),
                 .consumer = 0,
                 .cmd = n(cmd),
                 .message_permits = mp,
                 .ack_set = std::move(ack),
                 .batch_size = batch_size};
}
inline Recv recv(std::uint64_t cmd, std::optional<std::uint64_t> mp, AckSet ack = {},
          std::uint64_t inc = 1) {
  return Recv{.inc = n(inc), .cmd = n(cmd), .message_permits = mp, .ack_set = std::move(ack)};
}
inline Claim claim(std::uint64_t cmd, std::string msg, std::optional<std::int64_t> index = std::nullopt) {
  return Claim{.cmd = n(cmd), .msg = s(std::move(msg)), .index = index};
}
inline Settle settle(std::uint64_t cmd, std::int64_t units) { return Settle{.cmd = n(cmd), .n = units}; }
inline MsgReturn msg_return(std::string msg, std::int64_t units = 1) {
  return MsgReturn{.msg = s(std::move(msg)), .n = units};
}
inline Flow flow(std::int64_t permits, std::optional<std::uint64_t> inc = std::nullopt,
          std::string cnx = "c1") {
  return Flow{.cnx = s(std::move(cnx)),
              .consumer = 0,
              .permits = permits,
              .inc = inc ? std::optional<Id>(n(*inc)) : std::nullopt};
}
inline Quiescent quiescent(std::string cnx = "c1") { return Quiescent{.cnx = s(std::move(cnx))}; }
inline SentEntry entry(std::uint64_t cmd, std::int64_t batch_size, bool admitted,
                std::optional<std::int64_t> p, AckSet ack = {}) {
  return SentEntry{.cmd = n(cmd),
                   .entry = SendEntry{.batch_size = batch_size, .ack_set = std::move(ack),
                                      .admitted = admitted},
                   .p = p};
}

inline MonitorReport check(const TraceHeader& h, const Trace& t) { return check_trace(h, t.events()); }

inline std::string dump(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += format_finding(f) + "\n";
  return out.empty() ? "(none)\n" : out;
}
inline std::string dump(const MonitorReport& r) {
  return "violations:\n" + dump(r.violations) + "deviations:\n" + dump(r.deviations);
}

inline bool contains_all(const std::string& text, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (text.find(p) == std::string::npos) return false;
  }
  return true;
}

// The first violation is `rule` and its explanation contains every one of `parts`.
inline ::testing::AssertionResult FirstViolation(const MonitorReport& r, RuleId rule,
                                          std::initializer_list<std::string_view> parts) {
  if (r.violations.empty()) {
    return ::testing::AssertionFailure() << "no violation; expected " << rule_name(rule) << "\n"
                                         << dump(r);
  }
  const Finding& f = r.violations.front();
  if (f.rule != rule || !contains_all(f.explanation, parts)) {
    ::testing::AssertionResult out = ::testing::AssertionFailure();
    out << "expected first violation " << rule_name(rule) << " mentioning";
    for (std::string_view p : parts) out << " [" << p << "]";
    return out << "\n" << dump(r);
  }
  return ::testing::AssertionSuccess();
}

// Some finding of `findings` is `rule` and mentions every one of `parts`.
inline ::testing::AssertionResult Reports(const std::vector<Finding>& findings, RuleId rule,
                                   std::initializer_list<std::string_view> parts) {
  for (const Finding& f : findings) {
    if (f.rule == rule && contains_all(f.explanation, parts)) {
      return ::testing::AssertionSuccess();
    }
  }
  ::testing::AssertionResult out = ::testing::AssertionFailure();
  out << "no " << rule_name(rule) << " mentioning";
  for (std::string_view p : parts) out << " [" << p << "]";
  return out << " among:\n" << dump(findings);
}

inline ::testing::AssertionResult Clean(const MonitorReport& r) {
  if (r.violations.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "unexpected violations\n" << dump(r);
}

inline auto HasRule(RuleId rule) { return Field(&Finding::rule, rule); }

// The trace judged by one monitor, keeping its whole ledger (retain: whole-trace mode, as
// `render` runs it) or streaming (as `validate` runs it); lines numbered from 2.
inline MonitorReport run(const TraceHeader& h, const std::vector<Event>& events, bool retain) {
  Monitor m(h, MonitorOptions{.retain_ledger = retain});
  for (std::size_t i = 0; i < events.size(); ++i) m.on_event(events[i], i + 2);
  m.finish();
  return {m.violations(), m.deviations()};
}

// Both modes give the same findings, in the same order, with the same text.
inline ::testing::AssertionResult SameVerdict(const MonitorReport& a, const MonitorReport& b) {
  const auto as_tuple = [](const Finding& f) { return std::tie(f.rule, f.line, f.explanation); };
  const auto same = [&](const std::vector<Finding>& x, const std::vector<Finding>& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (as_tuple(x[i]) != as_tuple(y[i])) return false;
    }
    return true;
  };
  if (same(a.violations, b.violations) && same(a.deviations, b.deviations)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "whole-trace:\n" << dump(a) << "streaming:\n" << dump(b);
}

// Runs `t` both ways, asserts they agree and returns the streaming report.
inline MonitorReport both(const TraceHeader& h, const Trace& t) {
  const MonitorReport whole = run(h, t.events(), true);
  const MonitorReport streaming = run(h, t.events(), false);
  EXPECT_TRUE(SameVerdict(whole, streaming));
  return streaming;
}

// Crypto FAIL: the command is transferred and returns nothing; held for redelivery (S4, X3).
inline Trace crypto_fail() {
  Trace t;
  t.subscribed(1, 16)
      .add(recv(1, 8))
      .add(Metadata{.cmd = n(1), .batch_size = 8})
      .add(Transfer{.cmd = n(1), .path = TransferPath::kCrypto})
      .add(settle(1, 0));
  return t;
}

// The size of a streaming monitor (retain_ledger off) after `t`, finished; `t` must be clean.
inline MonitorSize streamed_size(const TraceHeader& h, const Trace& t) {
  Monitor m(h, MonitorOptions{.retain_ledger = false});
  for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
  m.finish();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
  return m.size();
}

// Command 1 of P = 1 settled while its one message m0 is still handed off (permit state 1, Q = 4).
inline Trace settled_with_message_out() {
  Trace t;
  t.subscribed(1, 4)
      .add(recv(1, 1))
      .add(Metadata{.cmd = n(1), .batch_size = 1})
      .add(claim(1, "m0"))
      .add(settle(1, 0));
  return t;
}

}  // namespace permitcheck::spec::monitor_testing

#endif  // PERMITCHECK_TESTS_SPEC_MONITOR_TESTING_H_
