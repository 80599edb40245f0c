// Quiescence, decided once for every engine: when a consumer's traffic has come to rest, the
// point at which a trace gets its `quiescent` event and rules E5 and E6 are judged
// (docs/rules.md). `permitcheck conform` asks it while it waits on its broker; the capture
// reader (and the tap through it) asks it per consumer when a connection has been silent.
// Quiescence is not a rule itself (no rule ID is decided here): it says when the rules that
// need a resting point may look.
//
//   const Patience p{.settled = 0.5, .unsettled = 1.5};   // seconds of silence
//   if (quiescent(/*in_flight=*/0, /*silence=*/0.6, p)) mark();   // true: settled and quiet
//   quiescent(3, 0.6, p);  // false: entries in flight and the long silence not reached
//
// Guarantees: a pure function, O(1); monotone in the silence (once true for a silence, true
// for every longer one with the same in_flight and patience).
#ifndef PERMITCHECK_WIRE_QUIESCENCE_H_
#define PERMITCHECK_WIRE_QUIESCENCE_H_

#include <cstdint>
#include <limits>

namespace permitcheck::wire {

// How long a silence (seconds without traffic other than keep-alives) must last.
struct Patience {
  // With nothing in flight (every delivered entry acknowledged or given back).
  double settled = 0;
  // Whatever is in flight (a client that stopped acknowledging is at rest too, which E6
  // then judges). Infinity: never without everything settled.
  double unsettled = std::numeric_limits<double>::infinity();
};

// At rest: nothing in flight and `settled` silence, or `unsettled` silence.
inline bool quiescent(std::int64_t in_flight, double silence, const Patience& patience) {
  return (in_flight == 0 && silence >= patience.settled) || silence >= patience.unsettled;
}

}  // namespace permitcheck::wire

#endif  // PERMITCHECK_WIRE_QUIESCENCE_H_
