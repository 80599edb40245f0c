// BrokerObserver: broker-side facts that are not in the trace (the trace sees the wire from
// the client's side). A property's model uses them to follow each broker incarnation's balance.
//
//   struct Model : BrokerObserver {
//     void flow_applied(const std::string& inc, std::int64_t n) override { balance[inc] += n; }
//   };
#ifndef PERMITCHECK_IMPL_OBSERVER_H_
#define PERMITCHECK_IMPL_OBSERVER_H_

#include <cstdint>
#include <string>

namespace permitcheck::impl {

class BrokerObserver {
 public:
  virtual ~BrokerObserver() = default;
  // A broker consumer incarnation `inc` ("b3") was created for a Subscribe.
  virtual void consumer_added(const std::string& inc, std::uint64_t consumer_id) {
    (void)inc, (void)consumer_id;
  }
  // The broker applied a Flow of `permits` to incarnation `inc`.
  virtual void flow_applied(const std::string& inc, std::int64_t permits) {
    (void)inc, (void)permits;
  }
  // Incarnation `inc` ended (B11).
  virtual void consumer_removed(const std::string& inc) { (void)inc; }
};

}  // namespace permitcheck::impl

#endif  // PERMITCHECK_IMPL_OBSERVER_H_
