// The specification's vocabulary without its decisions: the names and bounds that the
// reference implementation (impl/) and the protocol code may share with the specification
// while deciding every rule themselves.
//
//   spec::DispatcherKind kind = spec::DispatcherKind::kPersistentKeyShared;
//   std::string_view name = spec::dispatcher_name(kind);          // "persistent_key_shared"
//   bool ok = p >= 1 && p <= spec::kMaxPermits;                   // W2, B8
//
// Nothing here decides a rule; the functions that do (finalize_permits, resolve_early, the
// Monitor) live in the other spec/ headers. docs/architecture.md says who may include what.
#ifndef PERMITCHECK_SPEC_VOCABULARY_H_
#define PERMITCHECK_SPEC_VOCABULARY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace permitcheck::spec {

// Largest valid permit count: P and message_permits live in 1..2^31-1 (B8, W2).
inline constexpr std::int64_t kMaxPermits = 2147483647;

// The dispatchers of B6. The first six debit an aggregate; single-active ones have none.
enum class DispatcherKind {
  kPersistentShared,            // modern, two send loops
  kPersistentSharedClassic,     // two send loops
  kPersistentKeyShared,         // sticky-key, overrides the send loop
  kPersistentKeySharedClassic,  // sticky-key
  kNonPersistentShared,
  kNonPersistentKeyShared,      // sticky-key
  kSingleActive,                // Exclusive / Failover: no aggregate, only B4
};

// All seven kinds, the six aggregate ones first.
std::span<const DispatcherKind> all_dispatcher_kinds();

// "persistent_shared", ..., "single_active" (the trace format's `dispatcher` values).
std::string_view dispatcher_name(DispatcherKind kind);
std::optional<DispatcherKind> parse_dispatcher(std::string_view name);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_VOCABULARY_H_
