// tests/rapidcheck_seed.cc, linked into every test binary, gives RapidCheck a known seed.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace {

TEST(TestSeed, RapidcheckRunsWithAKnownSeed) {
  const char* params = std::getenv("RC_PARAMS");
  ASSERT_NE(params, nullptr);
  const char* given = std::getenv("PERMITCHECK_PROPERTY_SEED");
  if (given == nullptr) {
    EXPECT_NE(std::string(params).find("seed="), std::string::npos) << params;
  }
}

}  // namespace
