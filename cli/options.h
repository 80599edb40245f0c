// What every subcommand shares about its options: checks of numeric values (a value is finite
// and in its range, or the command stops with exit 2 and a message naming the option; CLI11
// prefixes the option: "--idle: must be a finite number in [0.1, 60], not nan"; CLI::Range
// alone lets NaN through, so floating options use FiniteRange), the defaults one idea has in
// every subcommand (kDefaultSeed, kDefaultIdleSeconds), and deprecated spellings of renamed
// options (one warning line on stderr each, deprecation_warnings).
//
//   sub->add_option("--idle", idle_s, "Seconds of silence")->check(FiniteRange(0.1, 60.0));
//   CLI::Option* out = sub->add_option("--trace-out", path, "Write the trace here");
//   add_deprecated_alias(sub, out, "--emit-trace", path);   // old spelling, still accepted
#ifndef PERMITCHECK_CLI_OPTIONS_H_
#define PERMITCHECK_CLI_OPTIONS_H_

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// One default per idea across subcommands (docs/cli.md, "One name and one default per idea"):
// the seed of every random search (conform, matrix, check, review; the properties binary's
// too), and the seconds of silence that make a consumer quiescent (conform, matrix, tap,
// validate on captures). Every run prints the values it used in its report.
inline constexpr std::uint64_t kDefaultSeed = 491;
inline constexpr double kDefaultIdleSeconds = 1.5;

// The description that marks a deprecated spelling; deprecation_warnings finds them by it.
inline constexpr std::string_view kDeprecatedPrefix = "Deprecated spelling of ";

// Registers `old_name` as a deprecated spelling of `current`: it sets the same `target` and is
// hidden from --help. Using it still works and prints one warning line (deprecation_warnings);
// giving both spellings is a usage error (deprecated_alias_conflict).
template <typename T>
CLI::Option* add_deprecated_alias(CLI::App* sub, CLI::Option* current, const std::string& old_name,
                                  T& target) {
  const std::string current_name = "--" + current->get_lnames().front();
  CLI::Option* old =
      sub->add_option(old_name, target, std::string(kDeprecatedPrefix) + current_name);
  old->group("");
  return old;
}

// "permitcheck tap: --trace and --trace-out are one option (--trace is its deprecated
// spelling): give it once" when a parsed subcommand got both spellings; nullopt otherwise.
inline std::optional<std::string> deprecated_alias_conflict(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* o : sub->get_options()) {
      const std::string& d = o->get_description();
      if (o->count() == 0 || d.rfind(kDeprecatedPrefix, 0) != 0) continue;
      const std::string current = d.substr(kDeprecatedPrefix.size());
      const CLI::Option* c = sub->get_option_no_throw(current);
      if (c != nullptr && c->count() > 0) {
        return absl::StrCat("permitcheck ", sub->get_name(), ": --", o->get_lnames().front(),
                            " and ", current, " are one option (--", o->get_lnames().front(),
                            " is its deprecated spelling): give it once");
      }
    }
  }
  return std::nullopt;
}

// One line per deprecated spelling used on the parsed command line, e.g. "permitcheck validate:
// --emit-trace is deprecated: use --trace-out (same meaning)". Bounded by the options defined.
inline std::vector<std::string> deprecation_warnings(const CLI::App& app) {
  std::vector<std::string> lines;
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* o : sub->get_options()) {
      const std::string& d = o->get_description();
      if (o->count() == 0 || d.rfind(kDeprecatedPrefix, 0) != 0) continue;
      lines.push_back(absl::StrCat("permitcheck ", sub->get_name(), ": --",
                                   o->get_lnames().front(), " is deprecated: use ",
                                   d.substr(kDeprecatedPrefix.size()), " (same meaning)"));
    }
  }
  return lines;
}

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_OPTIONS_H_
