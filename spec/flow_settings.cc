#include "spec/flow_settings.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace permitcheck::spec {

FlowSettingsSeen flow_settings_seen(std::span<const Event> events) {
  FlowSettingsSeen seen;
  // The live consumers (connection, consumer id), each with whether its initial Flow is still
  // to come, and the first consumer subscribed in the trace (whose initial Flow is Q). A Flow
  // of a consumer not live (never subscribed here, or closed) is none of its settings.
  using Key = std::pair<std::string, std::uint64_t>;
  std::map<Key, bool> awaiting_initial;
  std::optional<Key> first;
  for (const Event& event : events) {
    std::visit(
        [&](const auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, Subscribe>) {
            const Key key(e.cnx.to_string(), e.consumer);
            awaiting_initial[key] = true;
            if (!first) first = key;
          } else if constexpr (std::is_same_v<E, Flow>) {
            auto it = awaiting_initial.find(Key(e.cnx.to_string(), e.consumer));
            if (it == awaiting_initial.end() || e.permits <= 0) return;  // grants nothing
            if (it->second) {
              it->second = false;
              if (!seen.q && first == it->first) seen.q = e.permits;
              return;
            }
            ++seen.replenishing_flows;
            seen.t = seen.t ? std::min(*seen.t, e.permits) : e.permits;
          } else if constexpr (std::is_same_v<E, CloseConsumer>) {
            awaiting_initial.erase(Key(e.cnx.to_string(), e.consumer));
          } else if constexpr (std::is_same_v<E, Disconnect>) {
            const std::string cnx = e.cnx.to_string();
            std::erase_if(awaiting_initial, [&](const auto& k) { return k.first.first == cnx; });
          }
        },
        event);
  }
  return seen;
}

std::optional<std::string> q_mismatch(const FlowSettingsSeen& seen, std::int64_t q) {
  if (!seen.q || *seen.q == q) return std::nullopt;
  return absl::StrCat("the client's first Flow granted ", *seen.q,
                      " permits, its receiver queue size Q, not the ", q, " given");
}

}  // namespace permitcheck::spec
