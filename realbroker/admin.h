// The Pulsar admin REST operations the real-broker runs need: readiness, topic stats (each
// consumer's availablePermits and unackedMessages, parsed with simdjson), topic unload and
// subscription creation/deletion.
//
//   PulsarAdmin admin(*parse_http_url("http://127.0.0.1:8080"));
//   absl::StatusOr<TopicStats> s = admin.topic_stats("persistent://public/default/t");
//   for (const ConsumerStats& c : s->subscriptions[0].consumers) use(c.available_permits);
//
// Guarantees: every call returns within its timeout; a non-2xx answer is an error naming the
// status and the start of the body; parsing never throws (bad JSON is InvalidArgument).
#ifndef PERMITCHECK_REALBROKER_ADMIN_H_
#define PERMITCHECK_REALBROKER_ADMIN_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "realbroker/http.h"

namespace permitcheck::realbroker {

struct ConsumerStats {
  std::string name;     // consumerName
  std::string address;  // the connection's remote address as the broker sees it
  std::int64_t available_permits = 0;
  std::int64_t unacked_messages = 0;
  std::int64_t msg_out_counter = 0;  // messages dispatched to it (batch entries count B)
  bool blocked = false;  // blockedConsumerOnUnackedMsgs
};

struct SubscriptionStats {
  std::string name;
  std::string type;  // "Shared", "Exclusive", ...
  std::int64_t backlog = 0;  // msgBacklog
  std::int64_t unacked_messages = 0;
  std::vector<ConsumerStats> consumers;
};

struct TopicStats {
  std::int64_t msg_in_counter = 0;
  std::vector<SubscriptionStats> subscriptions;
};

// Parses the JSON of GET /admin/v2/persistent/{tenant}/{ns}/{topic}/stats. Exposed for tests.
absl::StatusOr<TopicStats> parse_topic_stats(std::string_view json);

// "persistent://public/default/t" -> "persistent/public/default/t". InvalidArgument otherwise.
absl::StatusOr<std::string> topic_path(std::string_view topic);

class PulsarAdmin {
 public:
  explicit PulsarAdmin(HttpUrl url) : url_(std::move(url)) {}

  // Whether the broker answers GET /admin/v2/namespaces/public with public/default in it.
  bool ready();
  absl::StatusOr<TopicStats> topic_stats(std::string_view topic);
  // GET /lookup/v2/topic/...: makes the broker own the topic's bundle (a producer that
  // connects without a lookup is refused until then).
  absl::Status lookup(std::string_view topic);
  // PUT .../unload: the broker closes the topic's consumers (CLOSE_CONSUMER) and producers.
  absl::Status unload(std::string_view topic);
  // PUT .../subscription/{sub}: the subscription at the earliest message (a producer's messages
  // published before any consumer subscribed are then kept for it).
  absl::Status create_subscription(std::string_view topic, std::string_view subscription);
  absl::Status delete_subscription(std::string_view topic, std::string_view subscription);
  const HttpUrl& url() const { return url_; }

 private:
  absl::StatusOr<std::string> call(std::string_view method, const std::string& path,
                                   std::string_view body = "");
  HttpUrl url_;
};

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_ADMIN_H_
