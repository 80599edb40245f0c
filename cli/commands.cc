#include "cli/commands.h"

#include <algorithm>
#include <utility>

#include "cli/check.h"
#include "cli/conform.h"
#include "cli/matrix.h"
#include "cli/options.h"
#include "cli/prove_command.h"
#include "cli/real_broker.h"
#include "cli/render_command.h"
#include "cli/replay_command.h"
#include "cli/review.h"
#include "cli/selfcheck_command.h"
#include "cli/tap.h"
#include "cli/validate_command.h"
#include "spec/outcome.h"

namespace permitcheck::cli {

Commands::Commands(CLI::App& app) : app_(&app) {
  // The order of --help within each group (CLI11 lists the groups in the order of their first
  // subcommand: conform, a user's command, comes first).
  auto validate = std::make_unique<ValidateCommand>();
  validate_ = validate.get();
  commands_.push_back(std::make_unique<ConformCommand>());
  commands_.push_back(std::make_unique<ReviewCommand>());
  commands_.push_back(std::make_unique<TapCommand>());
  commands_.push_back(std::make_unique<MatrixCommand>());
  commands_.push_back(std::make_unique<RealBrokerCommand>());
  commands_.push_back(std::move(validate));
  commands_.push_back(std::make_unique<RenderCommand>());
  commands_.push_back(std::make_unique<ReplayCommand>());
  commands_.push_back(std::make_unique<CheckCommand>());
  commands_.push_back(std::make_unique<ProveCommand>());
  commands_.push_back(std::make_unique<SelfcheckCommand>());
  for (const std::unique_ptr<report::Subcommand>& c : commands_) {
    subs_.push_back(report::add_subcommand(app, *c));
  }
}

Commands::~Commands() = default;

void Commands::set_progress(bool on) { validate_->set_progress(on); }

std::vector<std::string> Commands::names() const {
  std::vector<std::string> names;
  for (const std::unique_ptr<report::Subcommand>& c : commands_) {
    if (c->audience() == report::Audience::kUser) names.emplace_back(c->name());
  }
  for (const std::unique_ptr<report::Subcommand>& c : commands_) {
    if (c->audience() == report::Audience::kMaintainer) names.emplace_back(c->name());
  }
  return names;
}

std::optional<int> Commands::run(std::istream& in, std::ostream& out, std::ostream& err) {
  if (std::optional<std::string> both = deprecated_alias_conflict(*app_)) {
    err << *both << "\n";
    return spec::kExitBadInput;
  }
  for (const std::string& warning : deprecation_warnings(*app_)) err << warning << "\n";
  for (std::size_t i = 0; i < commands_.size(); ++i) {
    if (subs_[i]->parsed()) return commands_[i]->run(in, out, err);
  }
  return std::nullopt;
}

}  // namespace permitcheck::cli
