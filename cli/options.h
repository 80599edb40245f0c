// Checks of numeric command-line options shared by every subcommand: a value is finite and in
// its range, or the command stops with exit 2 and a message naming the option (CLI11 prefixes
// the option: "--idle: must be a finite number in [0.1, 60], not nan"). CLI::Range alone lets
// NaN through (every comparison with NaN is false), so floating options use FiniteRange.
//
//   sub->add_option("--idle", idle_s, "Seconds of silence")->check(FiniteRange(0.1, 60.0));
//   sub->add_option("--cases", cases, "Cases")->check(IntRange(1, 1000000));
#ifndef PERMITCHECK_CLI_OPTIONS_H_
#define PERMITCHECK_CLI_OPTIONS_H_

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"

namespace permitcheck::cli {

namespace internal {

// A validator accepting the whole of a value that `parse` reads (strtod, strtoll) into a
// finite number within [lo, hi]; `kind` names the type in messages ("a finite number").
template <typename T, typename Parse>
CLI::Validator bounded(T lo, T hi, const std::string& kind, const std::string& type, Parse parse) {
  const std::string range = absl::StrCat("[", lo, ", ", hi, "]");
  const std::string what = absl::StrCat("must be ", kind, " in ", range, ", not ");
  return CLI::Validator(
      [lo, hi, what, parse](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const T v = parse(begin, &end);
        const bool finite = std::isfinite(static_cast<double>(v)) && errno != ERANGE;
        if (end == begin || *end != '\0' || !finite || v < lo || v > hi) return what + text;
        return "";
      },
      absl::StrCat(type, " in ", range));
}

}  // namespace internal

// A floating-point value, finite, in [lo, hi].
inline CLI::Validator FiniteRange(double lo, double hi) {
  return internal::bounded(lo, hi, "a finite number", "FLOAT",
                           [](const char* s, char** end) { return std::strtod(s, end); });
}

// An integer value in [lo, hi] (a sign, digits, nothing else).
inline CLI::Validator IntRange(std::int64_t lo, std::int64_t hi) {
  return internal::bounded<std::int64_t>(
      lo, hi, "an integer", "INT",
      [](const char* s, char** end) -> std::int64_t { return std::strtoll(s, end, 10); });
}

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_OPTIONS_H_
