// report::Subcommand and cli::Commands: every subcommand registered the one way (its --help
// group by audience, its examples at the foot, its options on its own subcommand) and the
// parsed one, and only it, run.
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "gtest/gtest.h"
#include "report/subcommand.h"

namespace permitcheck::cli {
namespace {

class Counting final : public report::Subcommand {
 public:
  explicit Counting(report::Audience audience) : audience_(audience) {}
  std::string_view name() const override { return "counting"; }
  std::string_view description() const override { return "Counts its calls."; }
  std::string_view examples() const override { return "  permitcheck counting --n 3"; }
  report::Audience audience() const override { return audience_; }
  void add_options(CLI::App& sub) override {
    ++added;
    sub.add_option("--n", n);
  }
  int run(std::istream&, std::ostream& out, std::ostream&) override {
    ++runs;
    out << n;
    return 0;
  }
  int added = 0, runs = 0, n = 0;

 private:
  report::Audience audience_;
};

TEST(Subcommand, AddSubcommandRegistersNameGroupExamplesAndOptionsOnce) {
  CLI::App app{"permitcheck"};
  Counting user(report::Audience::kUser);
  CLI::App* sub = report::add_subcommand(app, user);
  EXPECT_EQ(sub->get_name(), "counting");
  EXPECT_EQ(sub->get_description(), "Counts its calls.");
  EXPECT_EQ(sub->get_group(), std::string(report::kUserGroup));
  EXPECT_EQ(sub->get_footer(), "\nExamples:\n  permitcheck counting --n 3");
  EXPECT_EQ(user.added, 1);
  EXPECT_NE(sub->get_option_no_throw("--n"), nullptr);

  Counting maintainer(report::Audience::kMaintainer);
  CLI::App other{"permitcheck"};
  EXPECT_EQ(report::add_subcommand(other, maintainer)->get_group(),
            std::string(report::kMaintainerGroup));
}

TEST(Subcommand, EveryCommandHasAnExampleNamingItself) {
  CLI::App app{"permitcheck"};
  Commands commands(app);
  const std::vector<std::string> names = commands.names();
  ASSERT_GE(names.size(), 11u);
  for (const std::string& name : names) {
    const CLI::App* sub = app.get_subcommand(name);
    EXPECT_NE(sub->get_footer().find("Examples:\n  permitcheck " + name), std::string::npos)
        << name << ": " << sub->get_footer();
  }
}

TEST(Subcommand, NamesListTheUsersCommandsBeforeTheMaintainers) {
  CLI::App app{"permitcheck"};
  Commands commands(app);
  const std::vector<std::string> names = commands.names();
  bool maintainers = false;
  for (const std::string& name : names) {
    const bool maintainer = app.get_subcommand(name)->get_group() == report::kMaintainerGroup;
    EXPECT_FALSE(maintainers && !maintainer) << name << " listed after a maintainer's command";
    maintainers = maintainers || maintainer;
  }
  EXPECT_TRUE(maintainers);
  EXPECT_EQ(names.front(), "conform");
  EXPECT_EQ(names.back(), "selfcheck");
}

TEST(Subcommand, CommandsLeaveASubcommandTheyDidNotBuild) {
  CLI::App app{"permitcheck"};
  Counting counting(report::Audience::kUser);
  report::add_subcommand(app, counting);
  Commands commands(app);
  std::vector<std::string> args = {"permitcheck", "counting", "--n", "7"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
  std::istringstream in;
  std::ostringstream out, err;
  // Commands knows only its own list: a subcommand it did not build is not its to run.
  EXPECT_EQ(commands.run(in, out, err), std::nullopt);
  EXPECT_EQ(counting.runs, 0);
  EXPECT_EQ(counting.run(in, out, err), 0);
  EXPECT_EQ(out.str(), "7");
}

}  // namespace
}  // namespace permitcheck::cli
