#include "realbroker/balance.h"

#include <type_traits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "spec/finalize.h"
#include "spec/plain_text.h"

namespace permitcheck::realbroker {

WireConsumer* WireBalance::find(const spec::Id& cnx, std::uint64_t consumer) {
  auto it = index_.find(absl::StrCat(cnx.to_string(), "/", consumer));
  return it == index_.end() ? nullptr : &consumers_[it->second];
}

void WireBalance::on_event(const spec::Event& event) {
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, spec::Subscribe>) {
          // A new consumer (or a new one under an id reused): it starts clean (B11).
          const std::string key = absl::StrCat(e.cnx.to_string(), "/", e.consumer);
          index_[key] = consumers_.size();
          consumers_.push_back(WireConsumer{.connection = e.cnx.to_string(),
                                            .consumer = e.consumer});
        } else if constexpr (std::is_same_v<T, spec::SubscribeOk>) {
          if (WireConsumer* c = find(e.cnx, e.consumer)) c->live = true;
        } else if constexpr (std::is_same_v<T, spec::SubscribeFail> ||
                             std::is_same_v<T, spec::CloseConsumer>) {
          if (WireConsumer* c = find(e.cnx, e.consumer)) c->live = false;
        } else if constexpr (std::is_same_v<T, spec::Disconnect>) {
          for (WireConsumer& c : consumers_) {
            if (c.connection == e.cnx.to_string()) c.live = false;
          }
        } else if constexpr (std::is_same_v<T, spec::Flow>) {
          if (WireConsumer* c = find(e.cnx, e.consumer)) {
            c->flowed += e.permits;  // B10
            peak_ = std::max(peak_, c->available());
          }
        } else if constexpr (std::is_same_v<T, spec::Message>) {
          if (WireConsumer* c = find(e.cnx, e.consumer)) {
            // B2: P is B without an ack_set, else its set bits below B.
            c->debited += spec::candidate_permits(e.batch_size.value_or(1), e.ack_set);
            ++c->messages;
          }
        }
      },
      event);
}

std::vector<WireConsumer> WireBalance::live_consumers() const {
  std::vector<WireConsumer> out;
  for (const WireConsumer& c : consumers_) {
    if (c.live) out.push_back(c);
  }
  return out;
}

std::int64_t WireBalance::live_total() const {
  std::int64_t sum = 0;
  for (const WireConsumer& c : consumers_) {
    if (c.live) sum += c.available();
  }
  return sum;
}

std::string StatsComparison::finding() const {
  if (matches()) return "";
  if (wire_consumers != broker_consumers) {
    return absl::StrCat("B11: ", when, ": the broker lists ",
                        spec::count_noun(broker_consumers, "consumer"),
                        " on the subscription, the wire has ", wire_consumers,
                        " subscribed and not closed");
  }
  const char* direction = broker_available > wire_available ? "over-credit" : "under-credit";
  return absl::StrCat("B4: ", when, ": ", direction, ": the broker reports availablePermits ",
                      broker_available, ", the wire gives ", wire_available,
                      " (Flows minus the P of each MESSAGE sent)");
}

StatsComparison compare_with_stats(const std::string& when, const WireBalance& wire,
                                   const SubscriptionStats& broker) {
  StatsComparison out{.when = when,
                      .wire_available = wire.live_total(),
                      .wire_consumers = static_cast<std::int64_t>(wire.live_consumers().size()),
                      .broker_consumers = static_cast<std::int64_t>(broker.consumers.size())};
  for (const ConsumerStats& c : broker.consumers) {
    out.broker_available += c.available_permits;
    out.broker_unacked += c.unacked_messages;
  }
  return out;
}

}  // namespace permitcheck::realbroker
