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

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"

namespace permitcheck::cli {

// A floating-point value, finite, in [lo, hi].
inline CLI::Validator FiniteRange(double lo, double hi) {
  const std::string range = absl::StrCat("[", lo, ", ", hi, "]");
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(begin, &end);
        if (end == begin || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
          return absl::StrCat("must be a finite number in ", range, ", not ", text);
        }
        return "";
      },
      absl::StrCat("FLOAT in ", range));
}

// An integer value in [lo, hi] (a sign, digits, nothing else).
inline CLI::Validator IntRange(std::int64_t lo, std::int64_t hi) {
  const std::string range = absl::StrCat("[", lo, ", ", hi, "]");
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(begin, &end, 10);
        if (end == begin || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
          return absl::StrCat("must be an integer in ", range, ", not ", text);
        }
        return "";
      },
      absl::StrCat("INT in ", range));
}

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_OPTIONS_H_
