// The events of trace-format.md version 1, as C++ values.
//
// A trace is a TraceHeader followed by Events, in the order the recorder observed them. The
// reader (trace/) turns JSON Lines into these values; the properties and the solver produce
// them directly; the Monitor consumes them one at a time.
//
//   Event e = Claim{.cmd = Id::number(1), .msg = Id::text("m0"), .index = 0};
//   std::string_view name = event_name(e);   // "claim"
#ifndef PERMITCHECK_SPEC_EVENTS_H_
#define PERMITCHECK_SPEC_EVENTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spec/ack_set.h"
#include "spec/command_budget.h"
#include "spec/finalize.h"
#include "spec/resolve.h"
#include "spec/ruleset.h"

namespace permitcheck::spec {

// An identifier (cnx, inc, cmd, msg): a JSON string or a non-negative integer. The two kinds
// never compare equal: 7 and "7" are different identifiers.
class Id {
 public:
  Id() = default;
  static Id number(std::uint64_t n) { return Id(true, n, {}); }
  static Id text(std::string s) { return Id(false, 0, std::move(s)); }

  bool is_number() const { return is_number_; }
  std::uint64_t as_number() const { return number_; }
  const std::string& as_text() const { return text_; }

  // 7 or "m0": how diagnostics print it.
  std::string to_string() const { return is_number_ ? std::to_string(number_) : text_; }

  friend bool operator==(const Id&, const Id&) = default;
  // A number hashes as one word, a text as its characters: equal Ids hash equally, and the
  // common numeric Id never hashes an (empty) string.
  template <typename H>
  friend H AbslHashValue(H h, const Id& id) {
    if (id.is_number_) return H::combine(std::move(h), id.number_);
    return H::combine(std::move(h), id.text_);
  }

 private:
  Id(bool is_number, std::uint64_t n, std::string s)
      : is_number_(is_number), number_(n), text_(std::move(s)) {}
  bool is_number_ = true;
  std::uint64_t number_ = 0;
  std::string text_;
};

enum class TraceSource { kWire, kClient, kBroker, kModel };
std::string_view trace_source_name(TraceSource source);
std::optional<TraceSource> parse_trace_source(std::string_view name);

struct TraceHeader {
  TraceSource source = TraceSource::kModel;
  RulesetId ruleset = RulesetId::kRevD;
  std::optional<std::int64_t> q;  // receiver queue size Q
  std::optional<std::int64_t> t;  // Flow threshold T
};

// ---- Wire events ----
struct Connect { Id cnx; };
struct Subscribe { Id cnx; std::uint64_t consumer = 0; std::optional<Id> inc; };
struct SubscribeOk { Id cnx; std::uint64_t consumer = 0; };
struct SubscribeFail { Id cnx; std::uint64_t consumer = 0; };
struct Flow { Id cnx; std::uint64_t consumer = 0; std::int64_t permits = 0; std::optional<Id> inc; };
struct Message {
  Id cnx;
  std::uint64_t consumer = 0;
  Id cmd;
  std::optional<std::uint64_t> message_permits;  // absent = not on the wire
  AckSet ack_set;
  std::optional<std::int64_t> batch_size;
  std::optional<std::int64_t> epoch;
};
struct Ack { Id cnx; std::uint64_t consumer = 0; Id cmd; std::optional<std::string> validation_error; };
struct CloseConsumer { Id cnx; std::uint64_t consumer = 0; };
struct Disconnect { Id cnx; };
// `backlog`: entries the broker still holds for the consumer, when the recorder knows (B13).
struct Quiescent { Id cnx; std::uint64_t consumer = 0; std::optional<std::int64_t> backlog; };

// ---- Client accounting events ----
enum class CloseReason { kCloseConsumer, kDisconnect, kSubscribeFail, kClosed, kProtocolError };
std::string_view close_reason_name(CloseReason reason);
std::optional<CloseReason> parse_close_reason(std::string_view name);

enum class SkipReason { kDuplicate, kCompacted, kBeforeStart, kDeadLetter };
std::string_view skip_reason_name(SkipReason reason);
std::optional<SkipReason> parse_skip_reason(std::string_view name);

enum class TransferPath { kChunk, kCrypto, kProcessor };
std::string_view transfer_path_name(TransferPath path);
std::optional<TransferPath> parse_transfer_path(std::string_view name);

struct IncOpen { Id inc; Id cnx; std::uint64_t consumer = 0; };
struct IncFlowEnabled { Id inc; };
struct IncClose { Id inc; CloseReason reason = CloseReason::kClosed; };
struct Recv { Id inc; Id cmd; std::optional<std::uint64_t> message_permits; AckSet ack_set; };
struct Resolve { Id cmd; std::int64_t p = 0; PermitSource source = PermitSource::kLegacy; };
struct Metadata { Id cmd; std::int64_t batch_size = 0; };
struct Corrupt { Id cmd; FailureStage stage = FailureStage::kChecksum; std::optional<std::int64_t> index; };
struct Claim { Id cmd; Id msg; std::optional<std::int64_t> index; };
struct Restore { Id cmd; Id msg; };
struct Skip { Id cmd; std::int64_t index = 0; SkipReason reason = SkipReason::kDuplicate; };
struct Transfer { Id cmd; TransferPath path = TransferPath::kChunk; };
// The `path` of a direct return: a DirectPath, with the text kept for kOther only. It converts
// from the trace format's text (at the reader and for recorders that write text) and back
// (name()), so the strings live at the boundary and the checks match on the enum.
class ReturnPath {
 public:
  ReturnPath(DirectPath kind) : kind_(kind) {}  // NOLINT: implicit, a known path
  ReturnPath(std::string_view text);            // NOLINT: implicit, the trace-format text
  ReturnPath(const std::string& text) : ReturnPath(std::string_view(text)) {}  // NOLINT
  ReturnPath(const char* text) : ReturnPath(std::string_view(text)) {}         // NOLINT

  DirectPath kind() const { return kind_; }
  std::string_view name() const;  // "chunk", ..., or the text of kOther

  friend bool operator==(const ReturnPath&, const ReturnPath&) = default;
  friend bool operator==(const ReturnPath& p, DirectPath kind) { return p.kind_ == kind; }

 private:
  DirectPath kind_ = DirectPath::kOther;
  std::string other_;  // the text of kOther; empty for a known path
};

struct DirectReturn { Id cmd; std::int64_t n = 0; std::optional<ReturnPath> path; };
struct Settle { Id cmd; std::int64_t n = 0; };
struct MsgReturn { Id msg; std::int64_t n = 1; };
struct Drop { std::optional<Id> cmd; std::optional<Id> msg; std::int64_t n = 0; };
struct ProtocolError { Id cnx; std::string reason; };

// ---- Broker accounting events ----
struct SentEntry {
  Id cmd;
  SendEntry entry;                // batch_size, ack_set, admitted
  std::optional<std::int64_t> p;  // finalized P of an admitted entry
};
struct Send {
  std::uint64_t consumer = 0;
  std::optional<Id> inc;
  std::optional<DispatcherKind> dispatcher;
  std::vector<SentEntry> entries;
  std::int64_t consumer_debit = 0;
  std::optional<std::int64_t> dispatcher_debit;
};
struct ConsumerRemoved { std::uint64_t consumer = 0; std::optional<Id> inc; };
// The broker's write of a send to the consumer failed. Decision 10: a failed write is
// connection loss, so the consumer must be closed and removed (B11): nothing more is sent to or
// debited from that incarnation.
struct WriteFailed { std::uint64_t consumer = 0; std::optional<Id> inc; };

// An `x-` extension event: ignored by the monitor, except kSkipReleaseEvent.
struct Extension { std::string ev; };

// Message-object lifetime (S5, S6): the message object of the `skip` event just before it was
// released at skip time. A duplicate's object is released (S6); a dead-letter message's object
// must not be, dead-letter handling still holds it (S5; revision B's F3).
inline constexpr std::string_view kSkipReleaseEvent = "x-skip-release";

using Event = std::variant<Connect, Subscribe, SubscribeOk, SubscribeFail, Flow, Message, Ack,
                           CloseConsumer, Disconnect, Quiescent, IncOpen, IncFlowEnabled, IncClose,
                           Recv, Resolve, Metadata, Corrupt, Claim, Restore, Skip, Transfer,
                           DirectReturn, Settle, MsgReturn, Drop, ProtocolError, Send,
                           ConsumerRemoved, WriteFailed, Extension>;

// The trace-format `ev` name of an event ("subscribe_ok", "msg_return", ...).
std::string_view event_name(const Event& event);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_EVENTS_H_
