// A progress line for long work, shown only on a terminal: "LABEL: D/T UNIT done, m:ss elapsed,
// about m:ss left (NOW)". Nothing is written when the line is disabled, so JSON, JUnit and any
// output piped to a file stay exactly what they would be without it.
//
//   ProgressLine line(err, "prove", "checks", progress_wanted(flags, err_is_terminal()));
//   for (int i = 0; i < n; ++i) { line.update(i, n, names[i]); work(i); }
//   line.finish();  // "prove: 7/7 checks done, 0:41 elapsed"
//
// Guarantees: O(1) work and at most one write per update; `kRewrite` keeps one line (carriage
// return, erase to end of line), rewritten at most every 100 ms (the first update and the last,
// done == total, are always shown), and ends it once, at finish() or destruction; `kLines` writes
// one whole line per update, for work that prints lines of its own between updates. The estimate of
// time left is elapsed / done x (total - done), given once at least one unit is done.
#ifndef PERMITCHECK_CLI_PROGRESS_H_
#define PERMITCHECK_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace permitcheck::cli {

// Whether standard error is a terminal (the default for every progress line).
bool stderr_is_terminal();

// --progress forces the line on, --no-progress off; otherwise it follows the terminal.
inline bool progress_wanted(bool force_on, bool force_off, bool terminal) {
  if (force_off) return false;
  return force_on || terminal;
}

class ProgressLine {
 public:
  enum class Style { kRewrite, kLines };
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  ProgressLine(std::ostream& err, std::string label, std::string unit, bool enabled,
               Style style = Style::kRewrite, Clock clock = {});
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `done` of `total` units are done; `now` names what runs next (may be empty).
  void update(std::int64_t done, std::int64_t total, std::string_view now = {});
  // Ends a rewritten line with a newline (once); nothing if no update was shown.
  void finish();

  // The text of one update, without the line control (for tests and kLines).
  std::string text(std::int64_t done, std::int64_t total, std::string_view now) const;

 private:
  std::ostream& err_;
  std::string label_, unit_;
  bool enabled_;
  Style style_;
  Clock clock_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_shown_;
  bool open_ = false;  // a rewritten line is on the terminal, not yet ended
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_PROGRESS_H_
