// Shared by the docs/ tests: the source tree and a file of it as text.
#ifndef PERMITCHECK_TESTS_DOCS_DOCS_TESTING_H_
#define PERMITCHECK_TESTS_DOCS_DOCS_TESTING_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace permitcheck::docs_testing {

inline const std::filesystem::path kSourceDir = PERMITCHECK_SOURCE_DIR;

// The whole file, or "" when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace permitcheck::docs_testing

#endif  // PERMITCHECK_TESTS_DOCS_DOCS_TESTING_H_
