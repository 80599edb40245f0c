#include "trace/internal/schema.h"

#include <array>
#include <cstdlib>
#include <cstring>

namespace permitcheck::trace::internal {
namespace {

using F = FieldId;
using T = FieldType;

// Index-aligned with FieldId.
constexpr std::array<FieldInfo, static_cast<std::size_t>(FieldId::kCount)> kFields = {{
    {"cnx", T::kId, 0},
    {"inc", T::kId, 1},
    {"cmd", T::kId, 2},
    {"msg", T::kId, 3},
    {"consumer", T::kUint64, 0},
    {"message_permits", T::kUint64, 1},
    {"permits", T::kInt64, 0},
    {"batch_size", T::kInt64, 1},
    {"epoch", T::kInt64, 2},
    {"p", T::kInt64, 3},
    {"index", T::kInt64, 4},
    {"n", T::kInt64, 5},
    {"consumer_debit", T::kInt64, 6},
    {"dispatcher_debit", T::kInt64, 7},
    {"validation_error", T::kString, 0},
    {"reason", T::kString, 1},
    {"source", T::kString, 2},
    {"stage", T::kString, 3},
    {"path", T::kString, 4},
    {"dispatcher", T::kString, 5},
    {"ack_set", T::kAckSet, 0},
    {"entries", T::kEntries, 0},
    {"backlog", T::kInt64, 8},
}};

// Index-aligned with spec::Event; the field lists are the tables of trace-format.md.
constexpr std::array<EventSchema, kEventKinds> kEvents = {{
    // Wire events.
    {"connect", fields({F::kCnx}), 0},
    {"subscribe", fields({F::kCnx, F::kConsumer}), fields({F::kInc})},
    {"subscribe_ok", fields({F::kCnx, F::kConsumer}), 0},
    {"subscribe_fail", fields({F::kCnx, F::kConsumer}), 0},
    {"flow", fields({F::kCnx, F::kConsumer, F::kPermits}), fields({F::kInc})},
    {"message", fields({F::kCnx, F::kConsumer, F::kCmd}),
     fields({F::kMessagePermits, F::kAckSet, F::kBatchSize, F::kEpoch})},
    {"ack", fields({F::kCnx, F::kConsumer, F::kCmd}), fields({F::kValidationError})},
    {"close_consumer", fields({F::kCnx, F::kConsumer}), 0},
    {"disconnect", fields({F::kCnx}), 0},
    {"quiescent", fields({F::kCnx, F::kConsumer}), fields({F::kBacklog})},
    // Client accounting events.
    {"inc_open", fields({F::kInc, F::kCnx, F::kConsumer}), 0},
    {"inc_flow_enabled", fields({F::kInc}), 0},
    {"inc_close", fields({F::kInc, F::kReason}), 0},
    {"recv", fields({F::kInc, F::kCmd}), fields({F::kMessagePermits, F::kAckSet})},
    {"resolve", fields({F::kCmd, F::kP, F::kSource}), 0},
    {"metadata", fields({F::kCmd, F::kBatchSize}), 0},
    {"corrupt", fields({F::kCmd, F::kStage}), fields({F::kIndex})},
    {"claim", fields({F::kCmd, F::kMsg}), fields({F::kIndex})},
    {"restore", fields({F::kCmd, F::kMsg}), 0},
    {"skip", fields({F::kCmd, F::kIndex, F::kReason}), 0},
    {"transfer", fields({F::kCmd, F::kPath}), 0},
    {"direct_return", fields({F::kCmd, F::kN}), fields({F::kPath})},
    {"settle", fields({F::kCmd, F::kN}), 0},
    {"msg_return", fields({F::kMsg}), fields({F::kN})},
    {"drop", fields({F::kN}), fields({F::kCmd, F::kMsg})},
    {"protocol_error", fields({F::kCnx, F::kReason}), 0},
    // Broker accounting events.
    {"send", fields({F::kConsumer, F::kEntries, F::kConsumerDebit}),
     fields({F::kInc, F::kDispatcher, F::kDispatcherDebit})},
    {"consumer_removed", fields({F::kConsumer}), fields({F::kInc})},
    {"write_failed", fields({F::kConsumer}), fields({F::kInc})},
    // spec::Extension: named by its own `ev`.
    {"", 0, 0},
}};

static_assert(event_index<spec::Connect>() == 0);
static_assert(event_index<spec::Flow>() == 4);
static_assert(event_index<spec::WriteFailed>() == kEventKinds - 2);
static_assert(event_index<spec::Extension>() == kEventKinds - 1);

// Names hashed by their length and first, middle and last bytes (no two names of either table
// share a hash today; a bucket holds a few if they ever do), so that a lookup compares one
// candidate: the reader looks up every key of every line. Built at compile time.
class NameIndex {
 public:
  template <std::size_t N, typename Entry>
  constexpr explicit NameIndex(const std::array<Entry, N>& entries) {
    for (std::size_t i = 0; i < N; ++i) {
      const std::string_view name = entries[i].name;
      if (name.empty()) continue;
      Bucket& b = buckets_[hash(name)];
      if (b.count == b.names.size()) std::abort();  // the tables grew: widen Bucket
      b.names[b.count] = name;
      b.values[b.count] = static_cast<std::uint8_t>(i);
      ++b.count;
    }
  }

  // The entry's index, or -1.
  int find(std::string_view key) const {
    if (key.empty()) return -1;
    const Bucket& b = buckets_[hash(key)];
    for (std::size_t i = 0; i < b.count; ++i) {
      if (b.names[i].size() == key.size() && same_bytes(b.names[i].data(), key.data(), key.size()))
        return b.values[i];
    }
    return -1;
  }

 private:
  static constexpr std::size_t kBuckets = 64;
  struct Bucket {
    std::size_t count = 0;
    std::array<std::string_view, 4> names{};
    std::array<std::uint8_t, 4> values{};
  };

  static constexpr std::size_t hash(std::string_view s) {
    const auto byte = [&](std::size_t i) {
      return static_cast<std::size_t>(static_cast<unsigned char>(s[i]));
    };
    return (s.size() + 25 * byte(0) + 10 * byte(s.size() - 1) + 10 * byte(s.size() / 2)) %
           kBuckets;
  }

  template <typename T>
  static T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  // n >= 1 bytes at a and b equal? Two overlapping word loads instead of a byte loop (whose
  // branches mispredict on keys of varying length); names are short.
  static bool same_bytes(const char* a, const char* b, std::size_t n) {
    if (n >= 8) {
      if (load<std::uint64_t>(a) != load<std::uint64_t>(b) ||
          load<std::uint64_t>(a + n - 8) != load<std::uint64_t>(b + n - 8)) {
        return false;
      }
      return n <= 16 || std::memcmp(a + 8, b + 8, n - 16) == 0;
    }
    if (n >= 4) {
      return load<std::uint32_t>(a) == load<std::uint32_t>(b) &&
             load<std::uint32_t>(a + n - 4) == load<std::uint32_t>(b + n - 4);
    }
    return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
  }

  std::array<Bucket, kBuckets> buckets_{};
};

constexpr NameIndex kFieldIndex(kFields);
constexpr NameIndex kEventIndex(kEvents);

}  // namespace

const FieldInfo& field_info(FieldId id) { return kFields[static_cast<std::size_t>(id)]; }

int field_index_of(std::string_view key) { return kFieldIndex.find(key); }

const EventSchema& event_schema(std::size_t kind) { return kEvents[kind]; }

int event_kind_of(std::string_view ev) {
  return kEventIndex.find(ev);  // the extension's empty name is not indexed
}

std::string_view ev_name(const spec::Event& event) {
  if (const auto* ext = std::get_if<spec::Extension>(&event)) return ext->ev;
  return kEvents[event.index()].name;
}

}  // namespace permitcheck::trace::internal
