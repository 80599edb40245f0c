#include "cli/progress.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace permitcheck::cli {

namespace {

std::string minutes_seconds(double seconds) {
  const std::int64_t s = seconds < 0 ? 0 : static_cast<std::int64_t>(seconds + 0.5);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

}  // namespace

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::ProgressLine(std::ostream& err, std::string label, std::string unit, bool enabled,
                           Style style, Clock clock)
    : err_(err),
      label_(std::move(label)),
      unit_(std::move(unit)),
      enabled_(enabled),
      style_(style),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })),
      start_(clock_()) {}

std::string ProgressLine::text(std::int64_t done, std::int64_t total, std::string_view now) const {
  const double elapsed = std::chrono::duration<double>(clock_() - start_).count();
  std::string line = absl::StrCat(label_, ": ", done, "/", total, " ", unit_, " done, ",
                                  minutes_seconds(elapsed), " elapsed");
  if (done > 0 && done < total) {
    const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    absl::StrAppend(&line, ", about ", minutes_seconds(left), " left");
  }
  if (!now.empty() && done < total) line.append(" (").append(now).append(")");
  return line;
}

void ProgressLine::update(std::int64_t done, std::int64_t total, std::string_view now) {
  if (!enabled_) return;
  if (style_ == Style::kLines) {
    err_ << text(done, total, now) << "\n" << std::flush;
    return;
  }
  const auto t = clock_();
  if (open_ && done < total && t - last_shown_ < std::chrono::milliseconds(100)) return;
  err_ << "\r\033[K" << text(done, total, now) << std::flush;
  last_shown_ = t;
  open_ = true;
}

void ProgressLine::finish() {
  if (!open_) return;
  err_ << "\n" << std::flush;
  open_ = false;
}

}  // namespace permitcheck::cli
