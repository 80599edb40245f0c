// BrokerConsumer: the broker's permit balance of one consumer incarnation (B4, B5, B9-B11).
//
// The balance is signed: whole-entry dispatch may overdraw it (batch debt, B9) and it is never
// clamped. Flow only adds (B10). Removal ends the incarnation's debt (B11); nothing carries
// over to a replacement, which starts from a fresh BrokerConsumer.
//
//   BrokerConsumer c;
//   c.flow(1);  c.debit(10, 10);  // available == -9
//   c.flow(10);                   // available == 1: exact recovery, nothing over-granted
#ifndef PERMITCHECK_SPEC_BROKER_CONSUMER_H_
#define PERMITCHECK_SPEC_BROKER_CONSUMER_H_

#include <cstdint>

#include "absl/status/status.h"

namespace permitcheck::spec {

class BrokerConsumer {
 public:
  // B10: available += n. REQUIRES n >= 0. FailedPrecondition after remove() (B11);
  // OutOfRange if the balance would leave int64.
  absl::Status flow(std::int64_t n);

  // B4/B5: available -= debit (may go negative, B9); unacked += unacked_increase.
  // FailedPrecondition after remove().
  absl::Status debit(std::int64_t debit, std::int64_t unacked_increase);

  // B11: the incarnation ends; its debt and pending acks end with it.
  void remove() { removed_ = true; }

  std::int64_t available() const { return available_; }
  std::int64_t unacked() const { return unacked_; }
  bool removed() const { return removed_; }

 private:
  std::int64_t available_ = 0;
  std::int64_t unacked_ = 0;
  bool removed_ = false;
};

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_BROKER_CONSUMER_H_
