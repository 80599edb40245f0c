#include "spec/broker_consumer.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace permitcheck::spec {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

}  // namespace

absl::Status BrokerConsumer::flow(std::int64_t n) {
  if (removed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("B11: Flow of ", n, " for a removed broker consumer"));
  }
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("B10: negative Flow ", n));
  if (available_ > kMax - n) {
    return absl::OutOfRangeError(
        absl::StrCat("B10: available ", available_, " + Flow ", n, " overflows int64"));
  }
  available_ += n;  // B10: additive, never an absolute value
  return absl::OkStatus();
}

absl::Status BrokerConsumer::debit(std::int64_t debit, std::int64_t unacked_increase) {
  if (removed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("B11: debit of ", debit, " for a removed broker consumer"));
  }
  if (debit < 0 || unacked_increase < 0) {
    return absl::InvalidArgumentError(absl::StrCat("B4: negative debit ", debit,
                                                   " or unacked increase ", unacked_increase));
  }
  if (available_ < kMin + debit || unacked_ > kMax - unacked_increase) {
    return absl::OutOfRangeError(absl::StrCat("B9: available ", available_, " - debit ", debit,
                                              " or unacked ", unacked_, " + ", unacked_increase,
                                              " leaves int64"));
  }
  available_ -= debit;  // B9: may go negative, never clamped
  unacked_ += unacked_increase;
  return absl::OkStatus();
}

}  // namespace permitcheck::spec
