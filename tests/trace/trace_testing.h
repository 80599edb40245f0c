// Test support for the trace module: field-by-field equality of spec events (spec::Event has
// no operator==), printing for GoogleTest, and RapidCheck generators of every event kind.
//
//   rc::prop("...", [] { spec::Event e = *gen_event(); RC_ASSERT(events_equal(e, e)); });
#ifndef PERMITCHECK_TESTS_TRACE_TRACE_TESTING_H_
#define PERMITCHECK_TESTS_TRACE_TRACE_TESTING_H_

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "properties/generators.h"
#include "spec/events.h"
#include "trace/writer.h"

namespace permitcheck::spec {

// Every member of each event, as a tuple, so equality is exact and checked by the compiler to
// cover the members listed here. SendEntry has no operator==: SentEntry spells its members.
inline auto members(const Connect& e) { return std::tie(e.cnx); }
inline auto members(const Subscribe& e) { return std::tie(e.cnx, e.consumer, e.inc); }
inline auto members(const SubscribeOk& e) { return std::tie(e.cnx, e.consumer); }
inline auto members(const SubscribeFail& e) { return std::tie(e.cnx, e.consumer); }
inline auto members(const Flow& e) { return std::tie(e.cnx, e.consumer, e.permits, e.inc); }
inline auto members(const Message& e) {
  return std::tie(e.cnx, e.consumer, e.cmd, e.message_permits, e.ack_set, e.batch_size, e.epoch);
}
inline auto members(const Ack& e) { return std::tie(e.cnx, e.consumer, e.cmd, e.validation_error); }
inline auto members(const CloseConsumer& e) { return std::tie(e.cnx, e.consumer); }
inline auto members(const Disconnect& e) { return std::tie(e.cnx); }
inline auto members(const Quiescent& e) { return std::tie(e.cnx, e.consumer); }
inline auto members(const IncOpen& e) { return std::tie(e.inc, e.cnx, e.consumer); }
inline auto members(const IncFlowEnabled& e) { return std::tie(e.inc); }
inline auto members(const IncClose& e) { return std::tie(e.inc, e.reason); }
inline auto members(const Recv& e) { return std::tie(e.inc, e.cmd, e.message_permits, e.ack_set); }
inline auto members(const Resolve& e) { return std::tie(e.cmd, e.p, e.source); }
inline auto members(const Metadata& e) { return std::tie(e.cmd, e.batch_size); }
inline auto members(const Corrupt& e) { return std::tie(e.cmd, e.stage, e.index); }
inline auto members(const Claim& e) { return std::tie(e.cmd, e.msg, e.index); }
inline auto members(const Restore& e) { return std::tie(e.cmd, e.msg); }
inline auto members(const Skip& e) { return std::tie(e.cmd, e.index, e.reason); }
inline auto members(const Transfer& e) { return std::tie(e.cmd, e.path); }
inline auto members(const DirectReturn& e) { return std::tie(e.cmd, e.n, e.path); }
inline auto members(const Settle& e) { return std::tie(e.cmd, e.n); }
inline auto members(const MsgReturn& e) { return std::tie(e.msg, e.n); }
inline auto members(const Drop& e) { return std::tie(e.cmd, e.msg, e.n); }
inline auto members(const ProtocolError& e) { return std::tie(e.cnx, e.reason); }
inline auto members(const SentEntry& e) {
  return std::tie(e.cmd, e.entry.batch_size, e.entry.ack_set, e.entry.admitted, e.p);
}
inline auto members(const ConsumerRemoved& e) { return std::tie(e.consumer, e.inc); }
inline auto members(const Extension& e) { return std::tie(e.ev); }

inline bool entries_equal(const std::vector<SentEntry>& a, const std::vector<SentEntry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (members(a[i]) != members(b[i])) return false;
  }
  return true;
}

inline bool events_equal(const Event& a, const Event& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Send>) {
          return std::tie(x.consumer, x.inc, x.dispatcher, x.consumer_debit, x.dispatcher_debit) ==
                     std::tie(y.consumer, y.inc, y.dispatcher, y.consumer_debit,
                              y.dispatcher_debit) &&
                 entries_equal(x.entries, y.entries);
        } else {
          return members(x) == members(y);
        }
      },
      a);
}

inline bool headers_equal(const TraceHeader& a, const TraceHeader& b) {
  return std::tie(a.source, a.ruleset, a.q, a.t) == std::tie(b.source, b.ruleset, b.q, b.t);
}

// GoogleTest and RapidCheck print events and headers as trace lines.
inline void PrintTo(const Event& e, std::ostream* os) { *os << trace::write_event(e); }
inline void PrintTo(const TraceHeader& h, std::ostream* os) { *os << trace::write_header(h); }
inline void showValue(const Event& e, std::ostream& os) { os << trace::write_event(e); }
inline void showValue(const TraceHeader& h, std::ostream& os) { os << trace::write_header(h); }

}  // namespace permitcheck::spec

namespace permitcheck::trace::testing {

// For EXPECT_TRUE: on failure, shows both events as trace lines.
inline ::testing::AssertionResult EventsEqual(const spec::Event& actual,
                                              const spec::Event& expected) {
  if (spec::events_equal(actual, expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "read     " << trace::write_event(actual) << "\nexpected "
                                       << trace::write_event(expected);
}

// Integers of the whole type, with the boundaries the format cares about made likely.
template <typename Int>
rc::Gen<Int> gen_full_range() {
  using L = std::numeric_limits<Int>;
  std::vector<Int> edges = {0, 1, L::max(), static_cast<Int>(L::max() - 1), L::min()};
  if constexpr (std::is_same_v<Int, std::uint64_t>) {
    edges.push_back(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    edges.push_back(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1);
  } else {
    edges.push_back(-1);
  }
  return rc::gen::weightedOneOf<Int>({{3, rc::gen::arbitrary<Int>()},
                                      {1, rc::gen::elementOf(edges)},
                                      {1, rc::gen::inRange<Int>(L::min(), L::max())}});
}

// Valid UTF-8 text that exercises JSON escaping: quotes, backslashes, control characters
// (NUL included), DEL, and 2-, 3- and 4-byte characters.
inline rc::Gen<std::string> gen_text() {
  static const std::vector<std::string> kPieces = {"a",
                                                   "m",
                                                   "0",
                                                   "7",
                                                   " ",
                                                   "-",
                                                   "_",
                                                   "x-",
                                                   "\"",
                                                   "\\",
                                                   "/",
                                                   "\n",
                                                   "\r",
                                                   "\t",
                                                   "\b",
                                                   "\f",
                                                   std::string(1, '\0'),
                                                   "\x01",
                                                   "\x1f",
                                                   "\x7f",
                                                   "\xC3\xA9",
                                                   "\xE2\x82\xAC",
                                                   "\xF0\x9F\x98\x80",
                                                   "\xEF\xBF\xBF",
                                                   "\xE2\x80\xA8"};
  return rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(kPieces)),
                      [](const std::vector<std::string>& parts) {
                        std::string s;
                        for (const std::string& p : parts) s += p;
                        return s;
                      });
}

inline rc::Gen<spec::Id> gen_id() {
  return rc::gen::oneOf(rc::gen::map(gen_full_range<std::uint64_t>(), &spec::Id::number),
                        rc::gen::map(gen_text(), [](std::string s) { return spec::Id::text(s); }));
}

template <typename T>
rc::Gen<std::optional<T>> gen_optional(rc::Gen<T> gen) {
  return rc::gen::oneOf(rc::gen::just(std::optional<T>()),
                        rc::gen::map(std::move(gen), [](T v) { return std::optional<T>(v); }));
}

template <typename E>
rc::Gen<E> gen_enum(int count) {
  return rc::gen::map(rc::gen::inRange(0, count), [](int i) { return static_cast<E>(i); });
}

inline rc::Gen<spec::SentEntry> gen_sent_entry() {
  return rc::gen::map(
      rc::gen::tuple(gen_id(), gen_full_range<std::int64_t>(), properties::gen_wire_ack_set(),
                     rc::gen::arbitrary<bool>(), gen_optional(gen_full_range<std::int64_t>())),
      [](std::tuple<spec::Id, std::int64_t, spec::AckSet, bool, std::optional<std::int64_t>> t) {
        auto& [cmd, batch_size, ack_set, admitted, p] = t;
        return spec::SentEntry{cmd, spec::SendEntry{batch_size, ack_set, admitted}, p};
      });
}

inline rc::Gen<spec::Event> gen_event();

// The header of a readable trace: q >= 0 and t >= 1 when present.
inline rc::Gen<spec::TraceHeader> gen_header() {
  return rc::gen::map(
      rc::gen::tuple(
          gen_enum<spec::TraceSource>(4),
          rc::gen::element(spec::RulesetId::kLegacy, spec::RulesetId::kRevD),
          gen_optional(rc::gen::inRange<std::int64_t>(0, std::numeric_limits<std::int64_t>::max())),
          gen_optional(
              rc::gen::inRange<std::int64_t>(1, std::numeric_limits<std::int64_t>::max()))),
      [](std::tuple<spec::TraceSource, spec::RulesetId, std::optional<std::int64_t>,
                    std::optional<std::int64_t>>
             t) {
        auto& [source, rules, q, t_] = t;
        return spec::TraceHeader{source, rules, q, t_};
      });
}

namespace detail {

template <typename... Gens, typename F>
rc::Gen<spec::Event> event_of(F make, Gens... gens) {
  return rc::gen::map(rc::gen::tuple(std::move(gens)...),
                      [make](auto t) { return spec::Event(std::apply(make, std::move(t))); });
}

inline rc::Gen<std::uint64_t> consumer() { return gen_full_range<std::uint64_t>(); }
inline rc::Gen<std::int64_t> i64() { return gen_full_range<std::int64_t>(); }

}  // namespace detail

// Any event of any kind, every optional field present or absent, values over their full
// ranges (the reader accepts what the monitor later judges).
inline rc::Gen<spec::Event> gen_event() {
  using namespace spec;  // NOLINT
  using detail::consumer;
  using detail::event_of;
  using detail::i64;
  using OptId = std::optional<Id>;
  using OptI = std::optional<std::int64_t>;
  using OptU = std::optional<std::uint64_t>;
  using OptS = std::optional<std::string>;
  return rc::gen::oneOf(
      event_of([](Id c) { return Connect{c}; }, gen_id()),
      event_of(
          [](Id c, std::uint64_t k, OptId i) {
            return Subscribe{c, k, i};
          },
          gen_id(), consumer(), gen_optional(gen_id())),
      event_of(
          [](Id c, std::uint64_t k) {
            return SubscribeOk{c, k};
          },
          gen_id(), consumer()),
      event_of(
          [](Id c, std::uint64_t k) {
            return SubscribeFail{c, k};
          },
          gen_id(), consumer()),
      event_of(
          [](Id c, std::uint64_t k, std::int64_t p, OptId i) {
            return Flow{c, k, p, i};
          },
          gen_id(), consumer(), i64(), gen_optional(gen_id())),
      event_of([](Id c, std::uint64_t k, Id cmd, OptU mp, AckSet a, OptI b,
                  OptI ep) { return Message{c, k, cmd, mp, a, b, ep}; },
               gen_id(), consumer(), gen_id(), gen_optional(gen_full_range<std::uint64_t>()),
               properties::gen_wire_ack_set(), gen_optional(i64()), gen_optional(i64())),
      event_of(
          [](Id c, std::uint64_t k, Id cmd, OptS v) {
            return Ack{c, k, cmd, v};
          },
          gen_id(), consumer(), gen_id(), gen_optional(gen_text())),
      event_of(
          [](Id c, std::uint64_t k) {
            return CloseConsumer{c, k};
          },
          gen_id(), consumer()),
      event_of([](Id c) { return Disconnect{c}; }, gen_id()),
      event_of(
          [](Id c, std::uint64_t k, std::optional<std::int64_t> backlog) {
            return Quiescent{c, k, backlog};
          },
          gen_id(), consumer(),
          gen_optional(rc::gen::inRange<std::int64_t>(0, std::numeric_limits<std::int64_t>::max()))),
      event_of(
          [](Id i, Id c, std::uint64_t k) {
            return IncOpen{i, c, k};
          },
          gen_id(), gen_id(), consumer()),
      event_of([](Id i) { return IncFlowEnabled{i}; }, gen_id()),
      event_of(
          [](Id i, CloseReason r) {
            return IncClose{i, r};
          },
          gen_id(), gen_enum<CloseReason>(5)),
      event_of(
          [](Id i, Id cmd, OptU mp, AckSet a) {
            return Recv{i, cmd, mp, a};
          },
          gen_id(), gen_id(), gen_optional(gen_full_range<std::uint64_t>()), properties::gen_wire_ack_set()),
      event_of(
          [](Id cmd, std::int64_t p, PermitSource s) {
            return Resolve{cmd, p, s};
          },
          gen_id(), i64(), gen_enum<PermitSource>(4)),
      event_of(
          [](Id cmd, std::int64_t b) {
            return Metadata{cmd, b};
          },
          gen_id(), i64()),
      event_of(
          [](Id cmd, FailureStage s, OptI i) {
            return Corrupt{cmd, s, i};
          },
          gen_id(), gen_enum<FailureStage>(5), gen_optional(i64())),
      event_of(
          [](Id cmd, Id m, OptI i) {
            return Claim{cmd, m, i};
          },
          gen_id(), gen_id(), gen_optional(i64())),
      event_of(
          [](Id cmd, Id m) {
            return Restore{cmd, m};
          },
          gen_id(), gen_id()),
      event_of(
          [](Id cmd, std::int64_t i, SkipReason r) {
            return Skip{cmd, i, r};
          },
          gen_id(), i64(), gen_enum<SkipReason>(4)),
      event_of(
          [](Id cmd, TransferPath p) {
            return Transfer{cmd, p};
          },
          gen_id(), gen_enum<TransferPath>(3)),
      event_of(
          [](Id cmd, std::int64_t n, OptS p) {
            return DirectReturn{cmd, n, p};
          },
          gen_id(), i64(), gen_optional(gen_text())),
      event_of(
          [](Id cmd, std::int64_t n) {
            return Settle{cmd, n};
          },
          gen_id(), i64()),
      event_of(
          [](Id m, std::int64_t n) {
            return MsgReturn{m, n};
          },
          gen_id(), i64()),
      event_of(
          [](OptId cmd, OptId m, std::int64_t n) {
            return Drop{cmd, m, n};
          },
          gen_optional(gen_id()), gen_optional(gen_id()), i64()),
      event_of(
          [](Id c, std::string r) {
            return ProtocolError{c, r};
          },
          gen_id(), gen_text()),
      event_of([](std::uint64_t k, OptId i, std::optional<DispatcherKind> d,
                  std::vector<SentEntry> entries, std::int64_t debit,
                  OptI dd) { return Send{k, i, d, std::move(entries), debit, dd}; },
               consumer(), gen_optional(gen_id()), gen_optional(gen_enum<DispatcherKind>(7)),
               rc::gen::container<std::vector<SentEntry>>(gen_sent_entry()), i64(),
               gen_optional(i64())),
      event_of(
          [](std::uint64_t k, OptId i) {
            return ConsumerRemoved{k, i};
          },
          consumer(), gen_optional(gen_id())),
      event_of([](std::string suffix) { return Extension{"x-" + suffix}; }, gen_text()));
}

}  // namespace permitcheck::trace::testing

#endif  // PERMITCHECK_TESTS_TRACE_TRACE_TESTING_H_
