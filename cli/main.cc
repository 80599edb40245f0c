// permitcheck: the command-line front end. Exit codes: 0 pass, 1 violation (a check failed),
// 2 bad input or usage, 3 incomplete (nothing failed, but something in scope was not seen).
//
// main() builds the list of subcommands (cli/commands.h: each a report::Subcommand in its own
// file, with its --help text and examples), parses, and runs the one chosen. Besides parsing,
// it gives the command line its shape for a user: `permitcheck help CMD`, "did you mean" for a
// mistyped subcommand or option, and --version with the rulebook revision the build checks
// against.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "spec/rule_id.h"
#include "spec/ruleset.h"
#include "spec/outcome.h"

namespace {

namespace spec = permitcheck::spec;

// Every report goes to standard output; a write that failed (a full disk, /dev/full, a closed
// pipe) is bad output, never a silent pass.
int checked(int code) {
  std::cout.flush();
  if (std::cout) return code;
  std::cerr << "permitcheck: cannot write the report to standard output\n";
  return spec::kExitBadInput;
}

// Levenshtein distance, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The subcommand closest to `word` (at most 2 edits, or a prefix of a single name), or "".
std::string closest(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& name : names) {
    const std::size_t d = distance(word, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  if (!best.empty()) return best;
  std::vector<std::string> prefixed;
  for (const std::string& name : names) {
    if (word.size() >= 2 && name.rfind(word, 0) == 0) prefixed.push_back(name);
  }
  return prefixed.size() == 1 ? prefixed[0] : "";
}

// "permitcheck: unknown command "valdate" (did you mean "validate"?); ..." on stderr.
int unknown_command(std::string_view word, const std::vector<std::string>& names) {
  std::cerr << "permitcheck: unknown command \"" << word << "\"";
  if (const std::string guess = closest(word, names); !guess.empty()) {
    std::cerr << " (did you mean \"" << guess << "\"?)";
  }
  std::cerr << "; the commands:";
  for (const std::string& name : names) std::cerr << " " << name;
  std::cerr << " (permitcheck --help)\n";
  return spec::kExitBadInput;
}

// The long options of `sub` that the user's arguments name and `sub` does not know, each with the
// closest known one ("--formt" -> "--format"), or "" when none is close.
std::vector<std::pair<std::string, std::string>> unknown_options(CLI::App& sub,
                                                                  const std::vector<std::string>& args) {
  std::vector<std::string> known;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& name : o->get_lnames()) known.push_back("--" + name);
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& arg : args) {
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    out.emplace_back(name, closest(name, known));
  }
  return out;
}

std::string version_text() {
  const permitcheck::spec::Ruleset& final_rules =
      permitcheck::spec::ruleset(permitcheck::spec::RulesetId::kRevD);
  return std::string("permitcheck ") + PERMITCHECK_VERSION + "\nrulebook: " +
         std::string(final_rules.summary) + ", ruleset " + std::string(final_rules.name) + ", " +
         std::to_string(permitcheck::spec::all_rules().size()) + " rule IDs (docs/rules.md)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"permitcheck: a verification suite for Apache Pulsar's PIP-491 permit rules.\n"
               "Exit codes: 0 pass, 1 violation, 2 bad input or usage, 3 incomplete (nothing\n"
               "failed, but something in scope was not seen: the report says what).\n"
               "Every finding starts with a rule ID (K5, E2, ...); docs/rules.md explains each one.\n"
               "permitcheck help COMMAND shows a command's options and examples.",
               "permitcheck"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);

  // Every subcommand, each one object in its own file (cli/commands.h): --help lists the
  // users' commands before the maintainers', each with its examples at the foot.
  permitcheck::cli::Commands commands(app);
  const std::vector<std::string> names = commands.names();

  // `permitcheck help [COMMAND]` is `permitcheck [COMMAND] --help`; a first word that is no
  // command gets "did you mean".
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() >= 2 && args[1] == "help") {
    if (args.size() > 3) {
      std::cerr << "permitcheck help: one command at most (permitcheck help COMMAND)\n";
      return spec::kExitBadInput;
    }
    if (args.size() == 3 && std::find(names.begin(), names.end(), args[2]) == names.end()) {
      return unknown_command(args[2], names);
    }
    args.erase(args.begin() + 1);
    args.push_back("--help");
  } else if (args.size() >= 2 && !args[1].empty() && args[1][0] != '-' &&
             std::find(names.begin(), names.end(), args[1]) == names.end()) {
    return unknown_command(args[1], names);
  }
  std::vector<char*> parsed_argv;
  for (std::string& arg : args) parsed_argv.push_back(arg.data());

  try {
    app.parse(static_cast<int>(parsed_argv.size()), parsed_argv.data());
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && args.size() >= 2) {
      const std::vector<CLI::App*> subs =
          app.get_subcommands([&](CLI::App* s) { return s->get_name() == args[1]; });
      if (!subs.empty()) {
        const auto unknown = unknown_options(*subs.front(), {args.begin() + 2, args.end()});
        if (!unknown.empty()) {
          for (const auto& [name, guess] : unknown) {
            std::cerr << "permitcheck " << args[1] << ": unknown option " << name;
            if (!guess.empty()) std::cerr << " (did you mean " << guess << "?)";
            std::cerr << "\n";
          }
          std::cerr << "permitcheck help " << args[1] << " lists its options\n";
          return spec::kExitBadInput;
        }
      }
    }
    return app.exit(e) == 0 ? spec::kExitPass : spec::kExitBadInput;  // --help and --version exit 0
  }
  if (std::optional<int> code = commands.run(std::cin, std::cout, std::cerr)) return checked(*code);
  return spec::kExitBadInput;  // unreachable: the app requires one subcommand
}
