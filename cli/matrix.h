// `permitcheck matrix`: every installed client preset's newest release (or every installed
// release) x every conformance scenario, one cell each, PASS / FAIL / INCOMPLETE /
// NOT-APPLICABLE with its rule IDs, numbers and seconds, judged against each client's
// expectations (conformance/expectations/<preset>.txt). Writes OUT/matrix.html, matrix.md,
// matrix.json and matrix.junit.xml; `--shard i/n` runs one deterministic slice and writes its
// matrix.json, `matrix merge DIR... --out DIR` builds the same reports from the shards'.
//
//   MatrixCommand matrix;                       // a report::Subcommand (cli/commands.cc lists it)
//   CLI::App* sub = report::add_subcommand(app, matrix);  // and "matrix merge"
//   app.parse(argc, argv);  if (sub->parsed()) return matrix.run(std::cin, std::cout, std::cerr);
//
// Exit 0 nothing unexpected (every cell as its client's expectations say), 1 some cell
// unexpected, 2 bad usage or input (an unknown client, an unreadable shard or expectations).
#ifndef PERMITCHECK_CLI_MATRIX_H_
#define PERMITCHECK_CLI_MATRIX_H_

#include <cstdint>
#include <optional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"
#include "cli/options.h"

namespace permitcheck::cli {

class MatrixCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "matrix"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  int run_merge(std::ostream& out, std::ostream& err);

  CLI::App* sub_ = nullptr;
  CLI::App* merge_ = nullptr;
  std::string out_dir_;
  std::string clients_;
  std::string brokers_ = "conformance";  // --brokers: the broker axis
  std::string scenarios_;
  bool catalogue_releases_ = false;
  int jobs_ = 4;
  std::string shard_;
  std::string expect_;
  bool no_expect_ = false;
  bool progress_ = false;
  bool no_progress_ = false;
  std::uint64_t seed_ = kDefaultSeed;
  int cases_ = 1;
  int max_shrinks_ = 12;
  std::int64_t q_ = 10;
  double timeout_s_ = 20;
  double idle_s_ = kDefaultIdleSeconds;
  double deadline_s_ = 3600;
  std::vector<std::string> merge_dirs_;
  std::string merge_out_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_MATRIX_H_
