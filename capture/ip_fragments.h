// IP reassembly for the capture reader: the fragments of a TCP datagram (IPv4, or IPv6 with a
// Fragment header; TcpSegment::ip_fragment from capture/packet.h) in capture order in, the TCP
// segment they carry out once every byte of it came. What cannot be reassembled is a problem
// with a reason, for the connection to be reported (never a segment made up): fragments that
// overlap with different bytes, an end announced twice differently, bytes past the end, a
// fragment cut by the snap length, a datagram still incomplete after kTimeoutSeconds or at
// the end of the capture, the buffer limits reached.
//
//   IpDefragmenter d(IpDefragmenter::Limits{});
//   TcpSegment whole; std::vector<FragmentProblem> problems;
//   if (d.add(time, fragment, &whole, &problems)) on_segment(time, whole);  // views into d
//
// Bounds: a datagram holds at most 65535 bytes; the datagrams of one pair of addresses at most
// Limits::max_bytes_per_flow together; all of them Limits::max_bytes and Limits::max_datagrams
// (past either, the oldest datagram is given up, reported). Each fragment costs O(log n + its
// size) plus the comparison of what it overlaps.
#ifndef PERMITCHECK_CAPTURE_IP_FRAGMENTS_H_
#define PERMITCHECK_CAPTURE_IP_FRAGMENTS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "capture/packet.h"

namespace permitcheck::capture {

// A datagram that could not be reassembled. `src`/`dst` carry the ports when the first
// fragment was captured (ports_known), else only the addresses.
struct FragmentProblem {
  Endpoint src, dst;
  bool ports_known = false;
  double time = 0;
  std::string reason;
};

class IpDefragmenter {
 public:
  struct Limits {
    std::size_t max_bytes_per_flow = std::size_t{1} << 20;  // one pair of addresses
    std::size_t max_bytes = std::size_t{4} << 20;            // all datagrams together
    std::size_t max_datagrams = 4096;
  };
  // A datagram with a fragment missing this long (capture time) is given up, as a receiver
  // does (Linux: ipfrag_time, 30 s).
  static constexpr double kTimeoutSeconds = 30;

  explicit IpDefragmenter(Limits limits) : limits_(limits) {}

  // Adds `fragment` (ip_fragment set), captured at `time`. Returns true with *whole set when it
  // completes its datagram: a TCP segment whose payload and header view this object's buffer
  // (valid until the next call). Problems found (this datagram's, or older ones given up for
  // the limits or the timeout) are appended to *problems.
  bool add(double time, const TcpSegment& fragment, TcpSegment* whole,
           std::vector<FragmentProblem>* problems);
  // Gives up the datagrams incomplete for kTimeoutSeconds as of `now`.
  void expire(double now, std::vector<FragmentProblem>* problems);
  // Whether expire() is due (it looks at every datagram: at most once a second of capture).
  bool expiry_due(double now) const { return !datagrams_.empty() && now - last_expiry_ >= 1.0; }
  // The end of the capture: every datagram still incomplete is a problem.
  void finish(double now, std::vector<FragmentProblem>* problems);
  // Gives up every datagram held (the caller's memory limit), with `why`.
  void drop_all(double now, const std::string& why, std::vector<FragmentProblem>* problems);

  // What is held incomplete of the connection between `a` and `b` (a datagram whose first
  // fragment names their ports, or of their addresses without the first fragment), to be
  // said with a gap the connection shows: "" when nothing. O(datagrams held).
  std::string incomplete_between(const Endpoint& a, const Endpoint& b) const;

  // Fragment bytes held.
  std::size_t memory() const { return bytes_; }
  std::size_t datagrams() const { return datagrams_.size(); }
  std::uint64_t reassembled() const { return reassembled_; }

 private:
  // Addresses (both words of each), version, identification.
  using Key = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, bool,
                         std::uint32_t>;
  struct Datagram {
    Endpoint src, dst;  // ports once the first fragment came
    bool ports_known = false;
    double first_time = 0;
    std::uint64_t order = 0;           // arrival, for giving up the oldest
    std::map<std::uint32_t, std::string> pieces;  // by offset, never overlapping
    std::size_t bytes = 0;
    bool end_known = false;
    std::uint32_t end = 0;
  };
  static Key key_of(const TcpSegment& f);
  // The pair of addresses of a datagram's key.
  using Flow = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, bool>;
  static Flow flow_of(const Key& k) {
    return {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k)};
  }
  // Removes the datagram at `it`, reporting `reason` unless empty.
  void drop(std::map<Key, Datagram>::iterator it, double time, const std::string& reason,
            std::vector<FragmentProblem>* problems);

  Limits limits_;
  std::map<Key, Datagram> datagrams_;
  std::map<Flow, std::size_t> flow_bytes_;  // bytes held per pair of addresses
  double last_expiry_ = 0;
  std::size_t bytes_ = 0;
  std::uint64_t next_order_ = 0;
  std::uint64_t reassembled_ = 0;
  std::string done_;  // the last datagram completed (what *whole views)
};

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_IP_FRAGMENTS_H_
