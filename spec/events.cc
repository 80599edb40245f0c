#include "spec/events.h"

#include <array>
#include <utility>

namespace permitcheck::spec {
namespace {

// A name table for an enum whose values are 0..N-1 in declaration order.
template <typename E, std::size_t N>
std::optional<E> parse_by_table(const std::array<std::string_view, N>& names,
                                std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

constexpr std::array<std::string_view, 4> kSources = {"wire", "client", "broker", "model"};
constexpr std::array<std::string_view, 5> kCloseReasons = {
    "close_consumer", "disconnect", "subscribe_fail", "closed", "protocol_error"};
constexpr std::array<std::string_view, 4> kSkipReasons = {"duplicate", "compacted",
                                                          "before_start", "dead_letter"};
constexpr std::array<std::string_view, 3> kTransferPaths = {"chunk", "crypto", "processor"};

// Index-aligned with the Event variant's alternatives.
constexpr std::array<std::string_view, std::variant_size_v<Event>> kEventNames = {
    "connect",        "subscribe",     "subscribe_ok", "subscribe_fail",   "flow",
    "message",        "ack",           "close_consumer", "disconnect",     "quiescent",
    "inc_open",       "inc_flow_enabled", "inc_close", "recv",             "resolve",
    "metadata",       "corrupt",       "claim",        "restore",          "skip",
    "transfer",       "direct_return", "settle",       "msg_return",       "drop",
    "protocol_error", "send",          "consumer_removed", "write_failed", "x-extension",
};

}  // namespace

std::string_view trace_source_name(TraceSource source) {
  return kSources[static_cast<std::size_t>(source)];
}
std::optional<TraceSource> parse_trace_source(std::string_view name) {
  return parse_by_table<TraceSource>(kSources, name);
}

std::string_view close_reason_name(CloseReason reason) {
  return kCloseReasons[static_cast<std::size_t>(reason)];
}
std::optional<CloseReason> parse_close_reason(std::string_view name) {
  return parse_by_table<CloseReason>(kCloseReasons, name);
}

std::string_view skip_reason_name(SkipReason reason) {
  return kSkipReasons[static_cast<std::size_t>(reason)];
}
std::optional<SkipReason> parse_skip_reason(std::string_view name) {
  return parse_by_table<SkipReason>(kSkipReasons, name);
}

std::string_view transfer_path_name(TransferPath path) {
  return kTransferPaths[static_cast<std::size_t>(path)];
}
std::optional<TransferPath> parse_transfer_path(std::string_view name) {
  return parse_by_table<TransferPath>(kTransferPaths, name);
}

namespace {
constexpr std::array<std::string_view, 4> kDirectPaths = {"chunk", "crypto", "duplicate",
                                                          "dead_letter"};
}  // namespace

ReturnPath::ReturnPath(std::string_view text) {
  if (std::optional<DirectPath> known = parse_by_table<DirectPath>(kDirectPaths, text)) {
    kind_ = *known;
  } else {
    other_ = std::string(text);
  }
}

std::string_view ReturnPath::name() const {
  if (kind_ == DirectPath::kOther) return other_;
  return kDirectPaths[static_cast<std::size_t>(kind_)];
}

std::string_view event_name(const Event& event) {
  if (const auto* ext = std::get_if<Extension>(&event)) return ext->ev;
  return kEventNames[event.index()];
}

}  // namespace permitcheck::spec
