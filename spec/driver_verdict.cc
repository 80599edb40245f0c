#include "spec/driver_verdict.h"

#include "absl/strings/str_cat.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {

std::optional<Finding> dead_letter_verdict(std::uint64_t cmd, int redelivery_count,
                                           int max_redeliver_count, bool dead_lettered) {
  if ((redelivery_count > max_redeliver_count) == dead_lettered) return std::nullopt;
  return Finding{RuleId::kS5, 0,
                 dead_lettered
                     ? absl::StrCat("S5: command ", cmd,
                                    " was skipped as a dead letter at redelivery count ",
                                    redelivery_count, ", not past maxRedeliverCount = ",
                                    max_redeliver_count)
                     : absl::StrCat("S5: command ", cmd, " was handed off at redelivery count ",
                                    redelivery_count, ", past maxRedeliverCount = ",
                                    max_redeliver_count, ": it goes to dead-letter handling")};
}

std::optional<Finding> restored_handoff_verdict(std::uint64_t cmd, std::int64_t index,
                                                std::int64_t fails_at) {
  if (index == fails_at) return std::nullopt;
  return Finding{RuleId::kK2, 0,
                 absl::StrCat("K2: the hand-off of index ", index, " of command ", cmd,
                              " failed and was restored, but the run made none fail there (",
                              fails_at < 0 ? std::string("no hand-off of it fails")
                                           : absl::StrCat("index ", fails_at, " fails"),
                              ")")};
}

std::optional<Finding> in_order_chunk_verdict(const ChunkSettle& c) {
  if (!c.in_order || c.settled != 0 || c.progressed) return std::nullopt;
  return Finding{RuleId::kS2, 0,
                 absl::StrCat("S2: chunk ", c.chunk_id, " of ", c.num_chunks, " (command ", c.cmd,
                              ") arrived in order but returned and delivered nothing, as X4's "
                              "branch for an out-of-order chunk does")};
}

std::optional<Finding> undrained_verdict(std::int64_t pending, const std::string& inc,
                                         std::uint64_t consumer) {
  if (pending == 0) return std::nullopt;
  return Finding{RuleId::kE6, 0,
                 absl::StrCat("E6: settled with ", count_noun(pending, "entry", "entries"),
                              " pending at broker consumer ", inc, " (consumer ", consumer,
                              ") whose client consumed and acknowledged everything it was sent; "
                              "they are never completed or redelivered while it lives")};
}

std::optional<Finding> key_shared_backlog_verdict(const KeySharedBacklog& b) {
  if (!b.every_consumer_has_permits || (b.live_consumers > 1 && !b.none_pending)) {
    return std::nullopt;
  }
  return Finding{
      RuleId::kB13, 0,
      b.never_sent > 0
          ? absl::StrCat("B13: settled with ",
                         count_noun(b.never_sent, "published entry", "published entries"),
                         " never sent while every consumer has permits")
          : std::string("B13: settled with Key_Shared backlog and no key held back while every "
                        "consumer has permits; nothing was dispatched")};
}

std::optional<Finding> backlog_verdict(std::int64_t available, const std::string& inc) {
  if (available <= 0) return std::nullopt;
  return Finding{RuleId::kB13, 0,
                 absl::StrCat("B13: settled with backlog while broker consumer ", inc, " has ",
                              count_noun(available, "available permit"),
                              "; nothing was dispatched")};
}

std::optional<Finding> resubscribed_after_close_verdict(bool closed_itself, std::uint64_t consumer,
                                                        std::uint64_t old_inc,
                                                        const std::string& new_inc) {
  if (!closed_itself) return std::nullopt;
  return Finding{RuleId::kS7, 0,
                 absl::StrCat("S7: consumer ", consumer, " closed itself (incarnation ", old_inc,
                              ") but subscribed again as incarnation ", new_inc)};
}

std::optional<Finding> flow_below_threshold_verdict(std::int64_t permits, std::uint64_t inc,
                                                    std::int64_t t, bool after_initial_grant,
                                                    bool zero_queue) {
  if (!after_initial_grant || permits >= t || zero_queue) return std::nullopt;
  return Finding{RuleId::kN5, 0,
                 absl::StrCat("N5: Flow of ", permits, " for incarnation ", inc,
                              " below the threshold T = ", t,
                              " (only the initial grant may carry less)")};
}

std::optional<Finding> zero_queue_flow_verdict(bool flow_enabled_incarnation,
                                               std::uint64_t consumer, std::int64_t permits,
                                               const std::string& cnx) {
  if (flow_enabled_incarnation) return std::nullopt;
  return Finding{RuleId::kN4, 0,
                 absl::StrCat("N4: zero-queue consumer ", consumer, " wrote a Flow of ", permits,
                              " on ", cnx, " while it has no Flow-enabled incarnation")};
}

std::optional<Finding> unsettled_at_disconnect_verdict(std::optional<std::uint64_t> unsettled) {
  if (!unsettled) return std::nullopt;
  return Finding{RuleId::kK5, 0,
                 absl::StrCat("K5: command ", *unsettled, " was received but never settled")};
}

std::optional<Finding> stalled_verdict(StallCause cause, int consumer, std::uint64_t inc) {
  if (cause == StallCause::kNone) return std::nullopt;
  return Finding{
      RuleId::kE6, 0,
      absl::StrCat("consumer ", consumer, " is stalled at quiescence: ",
                   cause == StallCause::kNeverSubscribed ? "it never subscribed"
                   : cause == StallCause::kEndedWithoutReplacement
                       ? absl::StrCat("its incarnation ", inc,
                                      " ended and no replacement subscribed")
                       : absl::StrCat("its incarnation ", inc, " never became Flow-enabled"))};
}

std::optional<Finding> initial_grant_verdict(bool wrote_a_flow, bool zero_queue, int consumer,
                                             std::uint64_t inc, std::int64_t q) {
  if (wrote_a_flow || zero_queue || q <= 0) return std::nullopt;
  return Finding{RuleId::kN4, 0,
                 absl::StrCat("N4: consumer ", consumer, "'s incarnation ", inc,
                              " is Flow-enabled but never wrote its initial grant of Q = ", q)};
}

std::optional<Finding> zero_queue_available_verdict(std::int64_t available,
                                                    const std::string& inc,
                                                    std::uint64_t consumer) {
  if (available <= 1) return std::nullopt;
  return Finding{RuleId::kE5, 0,
                 absl::StrCat("E5: zero-queue broker consumer ", inc, " (consumer ", consumer,
                              ") has ", count_noun(available, "available permit"),
                              " at quiescence; a waiting receive() "
                              "grants 1, and only one waits")};
}

Finding unacknowledged_inconsistent_finding(std::uint64_t cmd, const std::string& cnx) {
  return Finding{RuleId::kC5, 0,
                 absl::StrCat("C5: inconsistent command ", cmd, " on ", cnx,
                              " was never acknowledged with a validation error")};
}

std::optional<Finding> unwritten_command_verdict(std::optional<std::uint64_t> unwritten) {
  if (!unwritten) return std::nullopt;
  return Finding{RuleId::kB7, 0,
                 absl::StrCat("B7: command ", *unwritten,
                              " was finalized by a send but never reached the client")};
}

}  // namespace permitcheck::spec
