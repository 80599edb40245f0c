// JSON and XML text for the command's reports: string escaping only. The reports are written
// by hand (no JSON library needed to write), so escaping lives in one place.
//
// Private to cli/.
//
//   std::string s;  append_json_string(&s, "a\"b");   // s == R"("a\"b")"
//   std::string x = xml_escape("a<b");                  // "a&lt;b"
#ifndef PERMITCHECK_VALIDATE_JSON_OUT_H_
#define PERMITCHECK_VALIDATE_JSON_OUT_H_

#include <string>
#include <string_view>

namespace permitcheck::validate {

// Appends `s` as a JSON string literal, quotes included. Control characters are escaped as
// \uXXXX (or their short forms); bytes that are not valid UTF-8 become U+FFFD.
void append_json_string(std::string* out, std::string_view s);
std::string json_string(std::string_view s);

// `s` as XML character data or attribute value: & < > " ' escaped, control characters other
// than tab, LF and CR dropped (XML 1.0 cannot carry them), invalid UTF-8 as U+FFFD.
std::string xml_escape(std::string_view s);

// Replaces every byte sequence of `s` that is not valid UTF-8 with U+FFFD.
std::string valid_utf8(std::string_view s);

}  // namespace permitcheck::validate

#endif  // PERMITCHECK_VALIDATE_JSON_OUT_H_
