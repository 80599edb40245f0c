// Helpers of the command-line tests: run `permitcheck` in-process (same parser as main()) and
// read/write golden files under tests/cli/golden/.
#ifndef PERMITCHECK_TESTS_CLI_CLI_TESTING_H_
#define PERMITCHECK_TESTS_CLI_CLI_TESTING_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/commands.h"

namespace permitcheck::cli::testing {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `permitcheck ARGS...` with `stdin_text` as standard input.
inline Run run_permitcheck(std::vector<std::string> args, const std::string& stdin_text = "") {
  CLI::App app{"permitcheck", "permitcheck"};
  app.require_subcommand(1);
  Commands commands(app);
  commands.set_progress(false);
  Run r;
  std::ostringstream out, err;
  std::istringstream in(stdin_text);
  std::vector<std::string> argv_storage = {"permitcheck"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    r.code = app.exit(e, out, err) == 0 ? 0 : 2;
    r.out = out.str();
    r.err = err.str();
    return r;
  }
  std::optional<int> code = commands.run(in, out, err);
  r.code = code.value_or(2);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// `permitcheck prove ARGS... --rlimit RLIMIT --timeout 86400`: a test's verdict comes from Z3's
// deterministic resource limit per query, sized from a measurement (tests/solver/solver_testing.h,
// PERMITCHECK_RLIMIT_REPORT=1), and never from the wall clock (issue 18).
inline std::vector<std::string> prove_args(std::vector<std::string> args, unsigned rlimit) {
  args.insert(args.begin(), "prove");
  for (std::string a : {std::string("--rlimit"), std::to_string(rlimit), std::string("--timeout"),
                        std::string("86400")}) {
    args.push_back(std::move(a));
  }
  return args;
}

inline std::string source_dir() {
  const char* env = std::getenv("PERMITCHECK_SOURCE_DIR");
#ifdef PERMITCHECK_SOURCE_DIR
  return env != nullptr ? env : PERMITCHECK_SOURCE_DIR;
#else
  return env != nullptr ? env : ".";
#endif
}

inline std::string golden_dir() { return source_dir() + "/tests/cli/golden"; }

inline bool update_golden() {
  const char* env = std::getenv("PERMITCHECK_UPDATE_GOLDEN");
  return env != nullptr && std::string(env) == "1";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace permitcheck::cli::testing

#endif  // PERMITCHECK_TESTS_CLI_CLI_TESTING_H_
