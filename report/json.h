// How every JSON report is written: with nlohmann-json, the one JSON writer of the project (no
// report escapes strings by hand). A command builds its report as a json value and prints it
// with one of these two.
//
//   nlohmann::ordered_json j = {{"ok", true}, {"findings", nlohmann::ordered_json::array()}};
//   out << json_line(j);       // {"ok":true,"findings":[]}\n
//   out << json_indented(j);   // the same, two spaces per level, for listings read by people
//
// Guarantees: never throws on the text it holds: bytes that are not valid UTF-8 are written
// as U+FFFD; non-ASCII text stays UTF-8; the output ends with one newline. O(size of `j`).
#ifndef PERMITCHECK_REPORT_JSON_H_
#define PERMITCHECK_REPORT_JSON_H_

#include <string>

#include "nlohmann/json.hpp"

namespace permitcheck::report {

// `j` on one line (no spaces).
template <typename Json>
std::string json_line(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

// `j` indented by two spaces per level.
template <typename Json>
std::string json_indented(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace permitcheck::report

#endif  // PERMITCHECK_REPORT_JSON_H_
