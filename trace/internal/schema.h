// The event vocabulary of trace-format.md version 1 as tables: every `ev` name with its
// required and optional fields, and every field name with the JSON type it is read as.
// The reader and the writer both use these tables, so they cannot disagree on a name.
//
// Private to trace/.
//
//   std::optional<std::size_t> kind = find_event("flow");    // variant index of spec::Flow
//   const EventSchema& s = event_schema(*kind);               // s.required has kCnx, kConsumer,
//   ... std::optional<FieldId> f = find_field("permits");          // FieldId::kPermits
#ifndef PERMITCHECK_TRACE_INTERNAL_SCHEMA_H_
#define PERMITCHECK_TRACE_INTERNAL_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <variant>

#include "spec/events.h"

namespace permitcheck::trace::internal {

// How a field's JSON value is read.
enum class FieldType : std::uint8_t {
  kId,       // string or non-negative integer (spec::Id)
  kUint64,   // integer in uint64 range
  kInt64,    // integer in int64 range
  kString,   // string (enumerations are checked against the spec's names afterwards)
  kAckSet,   // array of int64-or-uint64 words
  kEntries,  // `send` entries: array of {cmd, batch_size, [ack_set], admitted, [p]}
};

// Every field any event has. The value is the index into the field table.
enum class FieldId : std::uint8_t {
  kCnx,
  kInc,
  kCmd,
  kMsg,
  kConsumer,
  kMessagePermits,
  kPermits,
  kBatchSize,
  kEpoch,
  kP,
  kIndex,
  kN,
  kConsumerDebit,
  kDispatcherDebit,
  kValidationError,
  kReason,
  kSource,
  kStage,
  kPath,
  kDispatcher,
  kAckSet,
  kEntries,
  kBacklog,
  kCount,
};

struct FieldInfo {
  std::string_view name;
  FieldType type;
  std::uint8_t slot;  // index among the fields of the same type
};

inline constexpr std::size_t kIdSlots = 4;
inline constexpr std::size_t kUint64Slots = 2;
inline constexpr std::size_t kInt64Slots = 9;
inline constexpr std::size_t kStringSlots = 6;

const FieldInfo& field_info(FieldId id);

// The index of the field named `key` (exact, case-sensitive), or -1 if no event has it.
int field_index_of(std::string_view key);

// The field named `key` (exact, case-sensitive), if any event has it. Inline, so that the
// optional never goes through memory: the reader calls this for every key of every line.
inline std::optional<FieldId> find_field(std::string_view key) {
  const int i = field_index_of(key);
  if (i < 0) return std::nullopt;
  return static_cast<FieldId>(i);
}

using FieldMask = std::uint32_t;
static_assert(static_cast<std::size_t>(FieldId::kCount) <= 32);

constexpr FieldMask field_bit(FieldId id) { return FieldMask{1} << static_cast<unsigned>(id); }
constexpr FieldMask fields(std::initializer_list<FieldId> ids) {
  FieldMask m = 0;
  for (FieldId id : ids) m |= field_bit(id);
  return m;
}

// The `ev` name and fields of one event kind. Kinds are numbered by their index in
// spec::Event; spec::Extension has the empty name and no fields.
struct EventSchema {
  std::string_view name;
  FieldMask required;
  FieldMask optional;
};

inline constexpr std::size_t kEventKinds = std::variant_size_v<spec::Event>;

// The variant index of alternative T of spec::Event.
template <typename T, std::size_t I = 0>
constexpr std::size_t event_index() {
  static_assert(I < kEventKinds, "T is not an alternative of spec::Event");
  if constexpr (std::is_same_v<std::variant_alternative_t<I, spec::Event>, T>) {
    return I;
  } else {
    return event_index<T, I + 1>();
  }
}

// REQUIRES: kind < kEventKinds.
const EventSchema& event_schema(std::size_t kind);

// The kind whose `ev` name is `ev`, or -1 (extensions are not found here).
int event_kind_of(std::string_view ev);

// The kind whose `ev` name is `ev` (extensions are not found here).
inline std::optional<std::size_t> find_event(std::string_view ev) {
  const int i = event_kind_of(ev);
  if (i < 0) return std::nullopt;
  return static_cast<std::size_t>(i);
}

// The `ev` written for `event`: its schema name, or the extension's own name.
std::string_view ev_name(const spec::Event& event);

}  // namespace permitcheck::trace::internal

#endif  // PERMITCHECK_TRACE_INTERNAL_SCHEMA_H_
