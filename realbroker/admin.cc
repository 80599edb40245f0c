#include "realbroker/admin.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "simdjson.h"
#include "base/absl_view.h"

namespace permitcheck::realbroker {
namespace {

using simdjson::dom::element;

std::int64_t int_field(element object, std::string_view key) {
  std::int64_t v = 0;
  if (object[key].get(v) == simdjson::SUCCESS) return v;
  std::uint64_t u = 0;
  if (object[key].get(u) == simdjson::SUCCESS) return static_cast<std::int64_t>(u);
  return 0;
}

std::string string_field(element object, std::string_view key) {
  std::string_view v;
  if (object[key].get(v) == simdjson::SUCCESS) return std::string(v);
  return "";
}

ConsumerStats parse_consumer(element c) {
  bool blocked = false;
  if (c["blockedConsumerOnUnackedMsgs"].get(blocked) != simdjson::SUCCESS) blocked = false;
  return ConsumerStats{.name = string_field(c, "consumerName"),
                       .address = string_field(c, "address"),
                       .available_permits = int_field(c, "availablePermits"),
                       .unacked_messages = int_field(c, "unackedMessages"),
                       .msg_out_counter = int_field(c, "msgOutCounter"),
                       .blocked = blocked};
}

}  // namespace

absl::StatusOr<TopicStats> parse_topic_stats(std::string_view json) {
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("topic stats: not JSON");
  }
  simdjson::dom::object root;
  if (doc.get(root) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("topic stats: not a JSON object");
  }
  TopicStats out{.msg_in_counter = int_field(doc, "msgInCounter")};
  simdjson::dom::object subs;
  if (doc["subscriptions"].get(subs) != simdjson::SUCCESS) return out;
  for (auto [name, sub] : subs) {
    SubscriptionStats s{.name = std::string(name),
                        .type = string_field(sub, "type"),
                        .backlog = int_field(sub, "msgBacklog"),
                        .unacked_messages = int_field(sub, "unackedMessages")};
    simdjson::dom::array consumers;
    if (sub["consumers"].get(consumers) == simdjson::SUCCESS) {
      for (element c : consumers) s.consumers.push_back(parse_consumer(c));
    }
    out.subscriptions.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<std::string> topic_path(std::string_view topic) {
  for (std::string_view domain : {"persistent", "non-persistent"}) {
    const std::string prefix = std::string(domain) + "://";
    if (topic.substr(0, prefix.size()) != prefix) continue;
    const std::string_view rest = topic.substr(prefix.size());
    if (std::count(rest.begin(), rest.end(), '/') == 2) {
      return absl::StrCat(to_absl(domain), "/", to_absl(rest));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("not a full topic name (persistent://TENANT/NAMESPACE/TOPIC): ",
                   to_absl(topic)));
}

absl::StatusOr<std::string> PulsarAdmin::call(std::string_view method, const std::string& path,
                                              std::string_view body) {
  absl::StatusOr<HttpResponse> r = http_request(url_, method, path, body);
  if (!r.ok()) return r.status();
  if (r->status < 200 || r->status > 299) {
    return absl::FailedPreconditionError(absl::StrCat(to_absl(method), " ", path, ": HTTP ",
                                                      r->status, ": ", r->body.substr(0, 200)));
  }
  return std::move(r->body);
}

bool PulsarAdmin::ready() {
  absl::StatusOr<HttpResponse> r =
      http_request(url_, "GET", "/admin/v2/namespaces/public", "", std::chrono::seconds(2));
  return r.ok() && r->status == 200 && absl::StrContains(r->body, "public/default");
}

absl::StatusOr<TopicStats> PulsarAdmin::topic_stats(std::string_view topic) {
  absl::StatusOr<std::string> path = topic_path(topic);
  if (!path.ok()) return path.status();
  absl::StatusOr<std::string> body = call("GET", absl::StrCat("/admin/v2/", *path, "/stats"));
  if (!body.ok()) return body.status();
  return parse_topic_stats(*body);
}

absl::Status PulsarAdmin::lookup(std::string_view topic) {
  absl::StatusOr<std::string> path = topic_path(topic);
  if (!path.ok()) return path.status();
  return call("GET", absl::StrCat("/lookup/v2/topic/", *path)).status();
}

absl::Status PulsarAdmin::unload(std::string_view topic) {
  absl::StatusOr<std::string> path = topic_path(topic);
  if (!path.ok()) return path.status();
  return call("PUT", absl::StrCat("/admin/v2/", *path, "/unload")).status();
}

absl::Status PulsarAdmin::create_subscription(std::string_view topic,
                                              std::string_view subscription) {
  absl::StatusOr<std::string> path = topic_path(topic);
  if (!path.ok()) return path.status();
  // The body is the position: the earliest message.
  const std::string body = R"({"ledgerId":-1,"entryId":-1,"partitionIndex":-1})";
  absl::StatusOr<std::string> r =
      call("PUT", absl::StrCat("/admin/v2/", *path, "/subscription/", to_absl(subscription)), body);
  if (!r.ok() && absl::StrContains(r.status().message(), "HTTP 409")) return absl::OkStatus();
  return r.status();
}

absl::Status PulsarAdmin::delete_subscription(std::string_view topic,
                                              std::string_view subscription) {
  absl::StatusOr<std::string> path = topic_path(topic);
  if (!path.ok()) return path.status();
  return call("DELETE",
              absl::StrCat("/admin/v2/", *path, "/subscription/", to_absl(subscription),
                           "?force=true"))
      .status();
}

}  // namespace permitcheck::realbroker
