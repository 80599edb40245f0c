// Linked into every test binary of tests/: RapidCheck properties run with a known seed, printed
// at start, as the properties of properties/ do (properties/runner.h). The seed is 491 unless
// PERMITCHECK_PROPERTY_SEED says otherwise; an explicit RC_PARAMS is left as it is (it may set
// `seed=` itself). A failing property therefore reproduces with the printed command.
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct FixRapidcheckSeed {
  FixRapidcheckSeed() {
    if (const char* params = std::getenv("RC_PARAMS"); params != nullptr && *params != '\0') {
      std::fprintf(stderr, "rapidcheck: RC_PARAMS=\"%s\"\n", params);
      return;
    }
    const char* given = std::getenv("PERMITCHECK_PROPERTY_SEED");
    const std::string seed = given != nullptr && *given != '\0' ? given : "491";
    const std::string params = "seed=" + seed;
    setenv("RC_PARAMS", params.c_str(), 1);
    std::fprintf(stderr,
                 "rapidcheck: seed %s (PERMITCHECK_PROPERTY_SEED=%s or RC_PARAMS=\"seed=%s\" "
                 "reproduces a failure)\n",
                 seed.c_str(), seed.c_str(), seed.c_str());
  }
};

// Runs before main, so before RapidCheck reads RC_PARAMS (on its first property).
const FixRapidcheckSeed fix_rapidcheck_seed;

}  // namespace
