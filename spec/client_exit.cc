#include "spec/client_exit.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/absl_view.h"

namespace permitcheck::spec {
namespace {

// Takes "key=" and the value up to the next space from the front of `rest`.
std::optional<std::string_view> take_field(std::string_view& rest, std::string_view key) {
  if (!rest.starts_with(key) || rest.size() <= key.size() || rest[key.size()] != '=') {
    return std::nullopt;
  }
  rest.remove_prefix(key.size() + 1);
  const std::size_t space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;  // `how` always follows
  const std::string_view value = rest.substr(0, space);
  rest.remove_prefix(space + 1);
  return value;
}

}  // namespace

std::string client_exit_event(const ClientExit& x) {
  return absl::StrCat(to_absl(kClientExitEvent), " rule=", to_absl(rule_name(x.rule)),
                      " scenario=", x.scenario, " granted=", x.granted, " debited=", x.debited,
                      " how=", x.how);
}

std::optional<ClientExit> parse_client_exit_event(std::string_view ev) {
  if (!ev.starts_with(kClientExitEvent) || ev.size() == kClientExitEvent.size() ||
      ev[kClientExitEvent.size()] != ' ') {
    return std::nullopt;
  }
  std::string_view rest = ev.substr(kClientExitEvent.size() + 1);
  const std::optional<std::string_view> rule = take_field(rest, "rule");
  const std::optional<std::string_view> scenario = take_field(rest, "scenario");
  const std::optional<std::string_view> granted = take_field(rest, "granted");
  const std::optional<std::string_view> debited = take_field(rest, "debited");
  if (!rule || !scenario || !granted || !debited || !rest.starts_with("how=")) return std::nullopt;
  ClientExit x;
  const std::optional<RuleId> id = parse_rule_id(*rule);
  if (!id || !absl::SimpleAtoi(to_absl(*granted), &x.granted) ||
      !absl::SimpleAtoi(to_absl(*debited), &x.debited)) {
    return std::nullopt;
  }
  x.rule = *id;
  x.scenario = std::string(*scenario);
  x.how = std::string(rest.substr(4));
  return x;
}

std::string client_exit_text(const ClientExit& x) {
  return absl::StrCat("client ", x.how, " during ", x.scenario, " (its incarnation was debited ",
                      x.debited, " of ", x.granted, " granted; nothing more came back)");
}

}  // namespace permitcheck::spec
