#include "spec/prefetch_gauge.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/absl_view.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {

std::string prefetch_gauge_event(const PrefetchGauge& g) {
  return absl::StrCat(to_absl(kPrefetchGaugeEvent), " consumer=", g.consumer, " gauge=", g.gauge,
                      " held=", g.held);
}

std::optional<PrefetchGauge> parse_prefetch_gauge_event(std::string_view ev) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t space = ev.find(' ', start);
    parts.push_back(ev.substr(start, space == std::string_view::npos ? space : space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  if (parts.size() != 4 || parts[0] != kPrefetchGaugeEvent) return std::nullopt;
  auto value = [](std::string_view part, std::string_view key) -> std::optional<std::string_view> {
    if (!part.starts_with(key) || part.size() <= key.size() || part[key.size()] != '=') {
      return std::nullopt;
    }
    return part.substr(key.size() + 1);
  };
  const std::optional<std::string_view> c = value(parts[1], "consumer");
  const std::optional<std::string_view> g = value(parts[2], "gauge");
  const std::optional<std::string_view> h = value(parts[3], "held");
  PrefetchGauge out;
  if (!c || !g || !h || !absl::SimpleAtoi(to_absl(*c), &out.consumer) || !absl::SimpleAtoi(to_absl(*g), &out.gauge) ||
      !absl::SimpleAtoi(to_absl(*h), &out.held)) {
    return std::nullopt;
  }
  return out;
}

// M2.
std::optional<std::string> prefetch_gauge_leak(const Ruleset& rules, const PrefetchGauge& g) {
  if (rules.id != RulesetId::kRevD || g.gauge == g.held) return std::nullopt;
  return absl::StrCat("consumer ", g.consumer, " prefetch count gauge is ", g.gauge, " but ",
                      count_noun(g.held, "message"), g.held == 1 ? " is" : " are",
                      " prefetched (leak)");
}

}  // namespace permitcheck::spec
