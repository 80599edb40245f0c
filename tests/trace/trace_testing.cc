// The trace tests' RapidCheck generators (declared in trace_testing.h), compiled once.
#include "tests/trace/trace_testing.h"

#include <rapidcheck.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "properties/generators.h"
#include "spec/events.h"

namespace permitcheck::trace::testing {

// Valid UTF-8 text that exercises JSON escaping: quotes, backslashes, control characters
// (NUL included), DEL, and 2-, 3- and 4-byte characters.
rc::Gen<std::string> gen_text() {
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

rc::Gen<spec::Id> gen_id() {
  return rc::gen::oneOf(rc::gen::map(gen_full_range<std::uint64_t>(), &spec::Id::number),
                        rc::gen::map(gen_text(), [](std::string s) { return spec::Id::text(s); }));
}

rc::Gen<spec::SentEntry> gen_sent_entry() {
  return rc::gen::map(
      rc::gen::tuple(gen_id(), gen_full_range<std::int64_t>(), properties::gen_wire_ack_set(),
                     rc::gen::arbitrary<bool>(), gen_optional(gen_full_range<std::int64_t>())),
      [](std::tuple<spec::Id, std::int64_t, spec::AckSet, bool, std::optional<std::int64_t>> t) {
        auto& [cmd, batch_size, ack_set, admitted, p] = t;
        return spec::SentEntry{cmd, spec::SendEntry{batch_size, ack_set, admitted}, p};
      });
}

// The header of a readable trace: q >= 0 and t >= 1 when present.
rc::Gen<spec::TraceHeader> gen_header() {
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

namespace {

template <typename... Gens, typename F>
rc::Gen<spec::Event> event_of(F make, Gens... gens) {
  return rc::gen::map(rc::gen::tuple(std::move(gens)...),
                      [make](auto t) { return spec::Event(std::apply(make, std::move(t))); });
}

rc::Gen<std::uint64_t> consumer() { return gen_full_range<std::uint64_t>(); }
rc::Gen<std::int64_t> i64() { return gen_full_range<std::int64_t>(); }

}  // namespace

// Any event of any kind, every optional field present or absent, values over their full
// ranges (the reader accepts what the monitor later judges).
rc::Gen<spec::Event> gen_event() {
  using namespace spec;  // NOLINT
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
      event_of(
          [](std::uint64_t k, OptId i) {
            return WriteFailed{k, i};
          },
          consumer(), gen_optional(gen_id())),
      event_of([](std::string suffix) { return Extension{"x-" + suffix}; }, gen_text()));
}

}  // namespace permitcheck::trace::testing
