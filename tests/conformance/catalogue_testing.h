// Shared helpers of the bug-catalogue tests (bug_catalogue*_test.cc): a row by id, the exit
// status of a shipped consumer's `run` script, and the shape every zero-queue row has.
#ifndef PERMITCHECK_TESTS_CONFORMANCE_CATALOGUE_TESTING_H_
#define PERMITCHECK_TESTS_CONFORMANCE_CATALOGUE_TESTING_H_

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "conformance/bug_catalogue.h"
#include "conformance/client_presets.h"

namespace permitcheck::conformance::testing {

// The catalogue row `id`; a test failure (and the first row) when there is none.
inline const BugRow& row(std::string_view id) {
  const std::vector<BugRow>& rows = bug_catalogue();
  auto it = std::find_if(rows.begin(), rows.end(), [&](const BugRow& r) { return r.id == id; });
  if (it == rows.end()) ADD_FAILURE() << "no catalogue row " << id;
  return it == rows.end() ? rows.front() : *it;
}

// The exit status of clients/CLIENT/run with ENV and ARGS (no broker needed: the
// usage errors tested with it come before any connection); -1 when it did not exit.
inline int consumer_exit_status(std::string_view client, std::string_view env,
                                std::string_view args) {
  const std::string cmd =
      absl::StrCat(std::string(env), " '", PERMITCHECK_SOURCE_DIR, "/clients/",
                   std::string(client), "/run' ", std::string(args), " 2>/dev/null");
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A zero-queue row: the client's zero-queue mode (ENV) at Q = 1 in close_consumer, single
// messages only (a zero-queue consumer takes no batches), both releases installable.
inline void expect_zero_queue_row(const BugRow& r, std::string_view client,
                                  std::string_view env) {
  EXPECT_EQ(r.client, client);
  EXPECT_EQ(r.q, 1);
  EXPECT_EQ(r.client_env, env);
  EXPECT_EQ(r.scenario.kind, ScenarioKind::kCloseConsumer);
  EXPECT_TRUE(resolve_preset(absl::StrCat(std::string(client), "@", r.affected), "/src").ok());
  EXPECT_TRUE(resolve_preset(absl::StrCat(std::string(client), "@", r.fixed), "/src").ok());
  for (const EntrySpec& e : r.scenario.entries) EXPECT_FALSE(e.batched);
}

}  // namespace permitcheck::conformance::testing

#endif  // PERMITCHECK_TESTS_CONFORMANCE_CATALOGUE_TESTING_H_
