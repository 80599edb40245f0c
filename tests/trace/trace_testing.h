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
inline auto members(const WriteFailed& e) { return std::tie(e.consumer, e.inc); }
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

// Shared by the trace tests, which are compiled in unity batches (tests/CMakeLists.txt): a
// constant two sources need lives here, not in each one's anonymous namespace.
// Line 1 of a client trace.
inline constexpr char kHeader[] = R"({"trace":"pip491-permits","version":1,"source":"client"})";
inline constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::uint64_t kUint64Max = std::numeric_limits<std::uint64_t>::max();

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

// The generators below are defined in trace_testing.cc: their RapidCheck instantiations (every
// event kind's tuple, map and shrinking code) are compiled once there, not in every test that
// includes this header (docs/build-times.md).

// Valid UTF-8 text that exercises JSON escaping: quotes, backslashes, control characters
// (NUL included), DEL, and 2-, 3- and 4-byte characters.
rc::Gen<std::string> gen_text();

rc::Gen<spec::Id> gen_id();

template <typename T>
rc::Gen<std::optional<T>> gen_optional(rc::Gen<T> gen) {
  return rc::gen::oneOf(rc::gen::just(std::optional<T>()),
                        rc::gen::map(std::move(gen), [](T v) { return std::optional<T>(v); }));
}

template <typename E>
rc::Gen<E> gen_enum(int count) {
  return rc::gen::map(rc::gen::inRange(0, count), [](int i) { return static_cast<E>(i); });
}

rc::Gen<spec::SentEntry> gen_sent_entry();

// The header of a readable trace: q >= 0 and t >= 1 when present.
rc::Gen<spec::TraceHeader> gen_header();

// Any event of any kind, every optional field present or absent, values over their full
// ranges (the reader accepts what the monitor later judges).
rc::Gen<spec::Event> gen_event();

}  // namespace permitcheck::trace::testing

#endif  // PERMITCHECK_TESTS_TRACE_TRACE_TESTING_H_
