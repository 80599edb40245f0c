// Runs the cells of `permitcheck matrix` in-process: each (broker, client preset, release,
// scenario) cell of the `conformance` broker is one run_conformance call (conformance/conform.h)
// for that one scenario, with the preset's real Flow threshold; cells run side by side on a pool
// of threads (the runs mostly wait on client processes). The broker axis: a `pulsar-VERSION`
// broker (the standalone ci/install-pulsar-broker.sh installed, started once for all its cells)
// has a cell for each scenario with a real-broker pair (realbroker/fidelity.h), run one after
// the other through the tap (realbroker/run.h) beside the pool. Each cell keeps its client logs
// and its counterexample's trace under OUT/cells/<cell id>/.
//
//   MatrixSettings s{.out_dir = "/tmp/m", .jobs = 4};
//   absl::StatusOr<MatrixPlan> plan = plan_matrix(s);            // presets x scenarios
//   matrix::Matrix m = run_matrix(*plan, s, shard_cells(plan->matrix.plan, {1, 1}), progress);
//
// Guarantees: every planned cell of the slice gets exactly one Cell (INCOMPLETE when the
// deadline came before it started, or the real broker could not start); no client process
// outlives its run (conformance's and realbroker's guarantees) and the standalone is stopped
// before run_matrix returns; at most `jobs` conformance cells and one real-broker cell run at
// once.
#ifndef PERMITCHECK_CLI_MATRIX_RUN_H_
#define PERMITCHECK_CLI_MATRIX_RUN_H_

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/options.h"
#include "matrix/matrix.h"

namespace permitcheck::conformance {
struct ConformReport;
}
namespace permitcheck::realbroker {
struct RealBrokerOutcome;
}

namespace permitcheck::cli {

// The broker axis's own broker: permitcheck's conformance broker.
inline constexpr std::string_view kConformanceBroker = "conformance";
// "pulsar-4.2.4": the name of the Pulsar standalone installed under `root` ("" when its
// version cannot be read).
std::string pulsar_broker_name(std::string_view root);

struct MatrixSettings {
  std::string out_dir;                 // cells' artifacts go under OUT/cells/
  std::vector<std::string> clients;    // preset names; empty: every installed preset
  std::vector<std::string> scenarios;  // scenario names; empty: all
  bool catalogue_releases = false;     // every installed release, not only the newest
  int jobs = 4;                        // cells side by side
  std::uint64_t seed = kDefaultSeed;
  int cases = 1;                       // random parameter sets per cell after the fixed ones
  int max_shrinks = 12;
  std::int64_t q = 10;
  double timeout_s = 20;               // one client run
  double idle_s = kDefaultIdleSeconds;
  double deadline_s = 3600;            // the whole matrix: no cell starts after it
  std::string root;                    // where clients/ is (presets_root())
  // The broker axis: "conformance" and/or pulsar_broker_name(root); empty: conformance only.
  std::vector<std::string> brokers;
  double real_broker_timeout_s = 60;   // one real-broker cell
};

struct MatrixPlan {
  matrix::Matrix matrix;  // scenarios, clients, plan, notes; no cells yet
  // Per client row (client, version): the resolved command line.
  struct Row {
    std::string client, version, command;
    std::int64_t threshold = 1;
    bool knows_message_permits = false;
    std::chrono::milliseconds startup{10000};
  };
  std::vector<Row> rows;
};

// The cells: brokers x installed presets (their newest release, or every installed release) x
// the scenarios (for a pulsar broker only those with a real-broker pair). InvalidArgument for
// an unknown broker, client or scenario name; a pulsar broker that is not installed is a note
// and no cells.
absl::StatusOr<MatrixPlan> plan_matrix(const MatrixSettings& settings);

// Whether the preset's release is installed under `root`, asked of its own run script
// (ROOT/clients/NAME/run with PERMITCHECK_CHECK_INSTALLED=1, and
// PERMITCHECK_CLIENT_VERSION=VERSION unless `is_default`): the check a client run makes before
// it starts, which exits 0 when what it starts is there. NotFound with the script's message
// ("... is not built (run ci/install-go-client.sh)") otherwise, or without a run script.
absl::Status preset_installed(std::string_view name, std::string_view version, bool is_default,
                              std::string_view root);

// The cell of a one-scenario conform report: its outcome is the scenario's own (spec::Outcome,
// decided by conform), with the rules, findings, counterexample and reason the page shows.
// Defined when the conformance module is built.
void fill_cell(matrix::Cell& cell, const conformance::ConformReport& report);

using MatrixProgress = std::function<void(int done, int total, double elapsed_s)>;

// Runs `cells` (a slice of plan.matrix.plan) and returns the matrix with them, in plan order.
matrix::Matrix run_matrix(const MatrixPlan& plan, const MatrixSettings& settings,
                          const std::vector<matrix::CellKey>& cells,
                          const MatrixProgress& progress = {});

// The files a cell's run left in its folder `dir` (under the output folder `out`), linked
// from the cell by paths relative to `out`: trace.jsonl (when the cell holds no counterexample
// trace of its own) as trace_file, capture.pcap as capture, the *.log files as logs. A file
// that is not there is not linked.
void keep_cell_files(matrix::Cell& c, const std::filesystem::path& dir,
                     const std::filesystem::path& out);

// A real-broker cell from its run (realbroker/run.h): the outcome, the sorted distinct rule IDs,
// a finding per "RULE: text" of the run (line 0: the run), the stats comparisons as windows,
// the reason (the first finding or note).
void fill_from_real_broker(matrix::Cell& c, const realbroker::RealBrokerOutcome& o);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_MATRIX_RUN_H_
