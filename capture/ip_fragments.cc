#include "capture/ip_fragments.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "spec/plain_text.h"

namespace permitcheck::capture {
namespace {

// The largest IP datagram payload (IPv4's total length is 16 bits; an IPv6 jumbogram is never
// fragmented).
constexpr std::uint32_t kMaxDatagram = 65535;

std::string datagram_name(std::uint32_t id) { return absl::StrCat("IP datagram id ", id); }

}  // namespace

IpDefragmenter::Key IpDefragmenter::key_of(const TcpSegment& f) {
  return {f.src.word(0), f.src.word(1), f.dst.word(0), f.dst.word(1), f.src.v6, f.fragment_id};
}

void IpDefragmenter::drop(std::map<Key, Datagram>::iterator it, double time,
                          const std::string& reason, std::vector<FragmentProblem>* problems) {
  Datagram& d = it->second;
  if (!reason.empty()) {
    problems->push_back(FragmentProblem{.src = d.src, .dst = d.dst, .ports_known = d.ports_known,
                                        .time = time, .reason = reason});
  }
  bytes_ -= d.bytes;
  auto flow = flow_bytes_.find(flow_of(it->first));
  if (flow != flow_bytes_.end()) {
    flow->second -= d.bytes;
    if (flow->second == 0) flow_bytes_.erase(flow);
  }
  datagrams_.erase(it);
}

void IpDefragmenter::expire(double now, std::vector<FragmentProblem>* problems) {
  last_expiry_ = now;
  for (auto it = datagrams_.begin(); it != datagrams_.end();) {
    auto next = std::next(it);
    if (now - it->second.first_time >= kTimeoutSeconds) {
      drop(it, now,
           absl::StrCat("IP-fragmented segment: a fragment of ",
                        datagram_name(std::get<5>(it->first)), " never captured within ",
                        kTimeoutSeconds, " s (", spec::count_noun(it->second.bytes, "byte"),
                        " of it held): its bytes are not read"),
           problems);
    }
    it = next;
  }
}

void IpDefragmenter::finish(double now, std::vector<FragmentProblem>* problems) {
  while (!datagrams_.empty()) {
    auto it = datagrams_.begin();
    drop(it, now,
         absl::StrCat("IP-fragmented segment: the capture ends before every fragment of ",
                      datagram_name(std::get<5>(it->first)), " was captured (",
                      spec::count_noun(it->second.bytes, "byte"),
                      " of it held): its bytes are not read"),
         problems);
  }
}

void IpDefragmenter::drop_all(double now, const std::string& why,
                              std::vector<FragmentProblem>* problems) {
  while (!datagrams_.empty()) {
    auto it = datagrams_.begin();
    drop(it, now,
         absl::StrCat("IP-fragmented segment: ", datagram_name(std::get<5>(it->first)),
                      " given up (", why, "): its bytes are not read"),
         problems);
  }
}

std::string IpDefragmenter::incomplete_between(const Endpoint& a, const Endpoint& b) const {
  auto hosts = [](const Endpoint& x, const Endpoint& y) {
    return x.v6 == y.v6 && x.word(0) == y.word(0) && x.word(1) == y.word(1);
  };
  for (const auto& [key, d] : datagrams_) {
    const bool forward = hosts(d.src, a) && hosts(d.dst, b);
    const bool backward = hosts(d.src, b) && hosts(d.dst, a);
    if (!forward && !backward) continue;
    if (d.ports_known && !(forward ? d.src.port == a.port && d.dst.port == b.port
                                   : d.src.port == b.port && d.dst.port == a.port)) {
      continue;
    }
    return absl::StrCat("IP-fragmented segment: ", datagram_name(std::get<5>(key)),
                        " of this connection still lacks a fragment (",
                        spec::count_noun(d.bytes, "byte"), " of it held)");
  }
  return "";
}

bool IpDefragmenter::add(double time, const TcpSegment& f, TcpSegment* whole,
                         std::vector<FragmentProblem>* problems) {
  if (expiry_due(time)) expire(time, problems);
  const Key key = key_of(f);
  // (Not a structured binding: the lambdas below capture the iterator.)
  const auto emplaced = datagrams_.try_emplace(key);
  const auto it = emplaced.first;
  const bool fresh = emplaced.second;
  Datagram& d = it->second;
  if (fresh) {
    d.src = f.src;
    d.dst = f.dst;
    d.src.port = d.dst.port = 0;
    d.first_time = time;
    d.order = next_order_++;
  }
  if (f.fragment_offset == 0 && f.payload.size() >= 4) {
    d.ports_known = true;
    d.src.port = f.src.port;
    d.dst.port = f.dst.port;
  }
  const std::string name = datagram_name(f.fragment_id);
  if (f.missing > 0) {
    drop(it, time,
         absl::StrCat("IP-fragmented segment: snap length too short: ",
                      spec::count_noun(f.missing, "byte"), " of a fragment of ", name,
                      " at offset ", f.fragment_offset, " not captured"),
         problems);
    return false;
  }
  const std::uint32_t lo = f.fragment_offset;
  const auto hi = static_cast<std::uint64_t>(lo) + f.payload.size();
  // Every fragment but the last carries a multiple of 8 bytes.
  if (hi > kMaxDatagram || (f.more_fragments && f.payload.size() % 8 != 0) ||
      (f.more_fragments && f.payload.empty())) {
    drop(it, time,
         absl::StrCat("IP-fragmented segment: a fragment of ", name, " at offset ", lo, " of ",
                      spec::count_noun(f.payload.size(), "byte"), " is malformed (",
                      hi > kMaxDatagram ? "past 65535 bytes" : "not a multiple of 8 bytes",
                      "): its bytes are not read"),
         problems);
    return false;
  }
  auto inconsistent = [&](const std::string& what) {
    drop(it, time,
         absl::StrCat("IP-fragmented segment: fragments of ", name, " ", what,
                      ": which bytes the receiver took is unknown"),
         problems);
    return false;
  };
  if (!f.more_fragments) {
    if (d.end_known && d.end != hi) {
      return inconsistent(absl::StrCat("end at ", d.end, " and at ", hi));
    }
    d.end_known = true;
    d.end = static_cast<std::uint32_t>(hi);
  }
  if (d.end_known && (hi > d.end || (!d.pieces.empty() && std::prev(d.pieces.end())->first +
                                                                  std::prev(d.pieces.end())->second.size() >
                                                              d.end))) {
    return inconsistent(absl::StrCat("hold bytes past its end at ", d.end));
  }
  // The bytes this fragment shares with those held must be the same; only the new ones are
  // kept (pieces never overlap).
  std::string_view data = f.payload;
  std::uint64_t at = lo;
  auto next = d.pieces.upper_bound(lo);
  if (next != d.pieces.begin()) {
    auto prev = std::prev(next);
    const std::uint64_t prev_end = prev->first + prev->second.size();
    if (prev_end > at) {
      const auto both = static_cast<std::size_t>(std::min<std::uint64_t>(prev_end, hi) - at);
      if (std::string_view(prev->second).substr(static_cast<std::size_t>(at - prev->first), both) !=
          data.substr(0, both)) {
        return inconsistent(absl::StrCat("overlap with different bytes from offset ", at));
      }
      data.remove_prefix(both);
      at += both;
    }
  }
  std::vector<std::pair<std::uint32_t, std::string>> fresh_parts;
  for (auto n = d.pieces.lower_bound(static_cast<std::uint32_t>(at)); !data.empty();) {
    const std::uint64_t stop = n == d.pieces.end() ? hi : std::min<std::uint64_t>(n->first, hi);
    if (stop > at) {
      const auto len = static_cast<std::size_t>(stop - at);
      fresh_parts.emplace_back(static_cast<std::uint32_t>(at), std::string(data.substr(0, len)));
      data.remove_prefix(len);
      at = stop;
    }
    if (data.empty() || n == d.pieces.end()) break;
    const auto both =
        static_cast<std::size_t>(std::min<std::uint64_t>(n->first + n->second.size(), hi) - at);
    if (std::string_view(n->second).substr(0, both) != data.substr(0, both)) {
      return inconsistent(absl::StrCat("overlap with different bytes from offset ", at));
    }
    data.remove_prefix(both);
    at += both;
    ++n;
  }
  std::size_t added = 0;
  for (auto& [off, bytes] : fresh_parts) {
    added += bytes.size();
    d.pieces.emplace(off, std::move(bytes));
  }
  d.bytes += added;
  bytes_ += added;
  std::size_t& flow = flow_bytes_[flow_of(key)];
  flow += added;
  if (flow > limits_.max_bytes_per_flow) {
    drop(it, time,
         absl::StrCat("IP-fragmented segment: ", name, " given up (fragments between these "
                      "addresses past ", limits_.max_bytes_per_flow,
                      " bytes held): its bytes are not read"),
         problems);
    return false;
  }
  // Past the overall limits the oldest datagrams go (this one last).
  while (bytes_ > limits_.max_bytes || datagrams_.size() > limits_.max_datagrams) {
    auto oldest = std::min_element(datagrams_.begin(), datagrams_.end(),
                                   [](const auto& x, const auto& y) {
                                     return x.second.order < y.second.order;
                                   });
    const bool self = oldest == it;
    drop(oldest, time,
         absl::StrCat("IP-fragmented segment: ", datagram_name(std::get<5>(oldest->first)),
                      " given up (fragment buffer of ", limits_.max_bytes, " bytes / ",
                      limits_.max_datagrams, " datagrams full): its bytes are not read"),
         problems);
    if (self) return false;
  }
  // Complete: every byte from 0 to the end, in pieces that follow each other.
  if (!d.end_known || d.pieces.empty() || d.pieces.begin()->first != 0 || d.bytes != d.end) {
    return false;
  }
  done_.clear();
  done_.reserve(d.end);
  for (const auto& [off, bytes] : d.pieces) done_ += bytes;
  TcpSegment out;
  out.src = d.src;
  out.dst = d.dst;
  const std::uint32_t id = f.fragment_id;
  drop(it, time, "", problems);
  if (!parse_tcp_datagram(done_, &out)) {
    problems->push_back(FragmentProblem{
        .src = out.src, .dst = out.dst, .ports_known = out.src.port != 0 || out.dst.port != 0,
        .time = time,
        .reason = absl::StrCat("IP-fragmented segment: reassembled ", datagram_name(id),
                               " holds no valid TCP header: its bytes are not read")});
    return false;
  }
  ++reassembled_;
  *whole = out;
  return true;
}

}  // namespace permitcheck::capture
