// Plain text: the words every text a user reads is built from, so that no finding, deviation,
// report line or diagram writes "permit(s)" or shows a partial batch in a notation of its own.
//
//   count_noun(3, "permit") == "3 permits";   count_noun(1, "permit") == "1 permit";
//   count_noun(2, "entry", "entries") == "2 entries";   noun(1, "row") == "row";
//   acknowledged_text({1, 3}) == "acknowledged {1,3}";   // a partial batch, indexes already acked
#ifndef PERMITCHECK_SPEC_PLAIN_TEXT_H_
#define PERMITCHECK_SPEC_PLAIN_TEXT_H_

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spec/ack_set.h"

namespace permitcheck::spec {

// `one` when `singular`, else the plural: `many`, or `one` + "s" when `many` is empty.
std::string noun_text(bool singular, std::string_view one, std::string_view many);

// The singular `one` when n is 1, else the plural (0, 2, ... and any negative n): `many`, or
// `one` + "s" when `many` is empty (give `many` for an irregular plural: "entry", "entries").
template <std::integral Int>
std::string noun(Int n, std::string_view one, std::string_view many = {}) {
  return noun_text(n == 1, one, many);
}

// The number, a space and noun(n, one, many): "1 permit", "0 permits", "3 entries".
// Prints any integral n exactly (unsigned 64-bit values included).
template <std::integral Int>
std::string count_noun(Int n, std::string_view one, std::string_view many = {}) {
  return std::to_string(n) + " " + noun(n, one, many);
}

// The one notation of a partial batch in texts: the indexes already acknowledged, in the order
// given, "acknowledged {1,3}" ("acknowledged {}" when none is).
std::string acknowledged_text(const std::vector<std::int64_t>& indexes);

// The same notation for an ack set (whose set bits are the indexes still to deliver) of a batch
// of b messages: acknowledged_text of the indexes in [0, b) whose bit is clear, followed by
// ", bits {5,9} set beyond B" when bits at or beyond b are set. With b <= 0 (B unknown) it gives
// "ack set bits {0,2}" instead. REQUIRES: !a.absent(). Linear in the ack set's words and b.
std::string acknowledged_text(const AckSet& a, std::int64_t b);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_PLAIN_TEXT_H_
