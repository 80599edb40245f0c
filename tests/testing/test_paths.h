// The absolute paths a test binary needs (the source tree, built programs, an output folder),
// read at run time rather than compiled into every test source: a test source's compile line
// and preprocessed text then name no path of this checkout, so a fresh clone elsewhere reuses
// ccache's objects (docs/build-times.md). tests/CMakeLists.txt force-includes this header into
// every test source, and `permitcheck_test_path(TARGET MACRO VALUE)` there defines MACRO as a
// call to the function below of that name and generates, per binary, the one small source that
// returns VALUE (that source alone is compiled again in each checkout).
//
//   permitcheck_test_path(cli_tests PERMITCHECK_BIN "$<TARGET_FILE:permitcheck>")
//   -> PERMITCHECK_BIN expands to ::permitcheck_test_paths::bin(), a const char* (the macro's
//      name in lower case without its PERMITCHECK_ prefix)
//
// A macro the build does not define stays undefined, so `#ifdef PERMITCHECK_BIN` still tells
// whether the binary was built with that program.
#ifndef PERMITCHECK_TESTS_TESTING_TEST_PATHS_H_
#define PERMITCHECK_TESTS_TESTING_TEST_PATHS_H_

namespace permitcheck_test_paths {

const char* source_dir();
const char* review_trace_dir();
const char* properties_bin();
const char* reference_client();
const char* bin();

}  // namespace permitcheck_test_paths

#endif  // PERMITCHECK_TESTS_TESTING_TEST_PATHS_H_
