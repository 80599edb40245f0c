// to_absl(): a std::string_view as an absl::string_view. Debian's Abseil keeps absl::string_view
// a type of its own, and absl::StrCat, absl::StrFormat and absl::Status take only that one.
//
//   return absl::InvalidArgumentError(absl::StrCat("unknown rule ", to_absl(name)));
//
// The one definition for every module (a unity build joins sources that each had a copy).
// Guarantees: no copy, no allocation; the result views the same characters as its argument.
#ifndef PERMITCHECK_BASE_ABSL_VIEW_H_
#define PERMITCHECK_BASE_ABSL_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace permitcheck {

inline absl::string_view to_absl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace permitcheck

#endif  // PERMITCHECK_BASE_ABSL_VIEW_H_
