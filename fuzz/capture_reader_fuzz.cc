// libFuzzer target: the capture reader and the TCP reassembly (capture/). Whatever the bytes,
// reading them as a capture, or as a sequence of TCP segments of two connections, must
// return a status or a verdict, never crash, hang, leak or read out of bounds.
//
// The first byte chooses: even, the rest is a capture file read with libpcap
// (capture_file.h), and when it is 2 modulo 4, read both in place and by libpcap alone, which
// must agree; odd, the rest is a list of segments fed to the reassembly and the Pulsar
// decoding directly, each [flags][seq delta: 2 bytes][length][payload], so the fuzzer reaches
// reordering, overlaps and gaps without building packet headers.
//
// Built by fuzz/CMakeLists.txt with clang (-DPERMITCHECK_FUZZ=ON); ci/fuzz runs it:
//   cmake --build build-fuzz --target capture_reader_fuzz
//   build-fuzz/capture_reader_fuzz -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "capture/capture_file.h"
#include "capture/wire_monitor.h"

namespace {

using permitcheck::capture::Endpoint;
using permitcheck::capture::TcpSegment;

void feed_segments(std::string_view in, permitcheck::capture::WireTraceBuilder* builder) {
  Endpoint client[2], server;
  client[0].addr = {127, 0, 0, 1};
  client[0].port = 40000;
  client[1] = client[0];
  client[1].port = 40001;
  server.addr = {127, 0, 0, 1};
  server.port = 6650;
  std::uint32_t seq[2][2] = {{1000, 5000}, {0xFFFFFFF0u, 7000}};
  double time = 1000;
  while (in.size() >= 4) {
    const auto flags = static_cast<unsigned char>(in[0]);
    const auto delta = static_cast<std::uint16_t>((static_cast<unsigned char>(in[1]) << 8) |
                                                  static_cast<unsigned char>(in[2]));
    const std::size_t len = std::min<std::size_t>(static_cast<unsigned char>(in[3]), in.size() - 4);
    const int conn = (flags >> 5) & 1;
    const int dir = (flags >> 6) & 1;
    TcpSegment s;
    s.src = dir == 0 ? client[conn] : server;
    s.dst = dir == 0 ? server : client[conn];
    s.syn = flags & 0x02;
    s.fin = flags & 0x01;
    s.rst = (flags & 0x1C) == 0x1C;
    s.has_ack = flags & 0x10;
    // Mostly in order; the delta (signed) reorders, overlaps and skips.
    std::uint32_t& next = seq[conn][dir];
    s.seq = (flags & 0x80) ? next + static_cast<std::int16_t>(delta) : next;
    s.ack = seq[conn][1 - dir] + (flags & 0x08 ? delta : 0);
    s.payload = in.substr(4, len);
    s.missing = (flags & 0x0C) == 0x04 ? delta % 64 : 0;
    if (!(flags & 0x80)) next += static_cast<std::uint32_t>(len) + (s.syn || s.fin ? 1 : 0);
    time += (flags & 0x20) ? 0.7 : 0.001;
    builder->on_segment(time, s);
    in.remove_prefix(4 + len);
  }
  builder->finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  permitcheck::capture::WireMonitor checker(
      permitcheck::spec::TraceHeader{.source = permitcheck::spec::TraceSource::kWire}, nullptr);
  permitcheck::capture::CaptureOptions options;
  options.max_pending_bytes = 4096;  // small bounds: the overflow paths run too
  options.max_held_events = 16;
  options.idle_seconds = 0.5;
  permitcheck::capture::WireTraceBuilder builder(options, checker.sink());
  if (data[0] % 4 == 2) {
    // A pcap read in place must read as libpcap reads it (capture_file.h).
    const absl::Status in_place = permitcheck::capture::read_capture_bytes(bytes, &builder);
    checker.finish();
    permitcheck::capture::WireMonitor reference(
        permitcheck::spec::TraceHeader{.source = permitcheck::spec::TraceSource::kWire}, nullptr);
    permitcheck::capture::WireTraceBuilder libpcap(options, reference.sink());
    const absl::Status read = permitcheck::capture::read_capture_bytes(bytes, &libpcap, false);
    reference.finish();
    if (in_place != read || checker.events() != reference.events() ||
        checker.violations().size() != reference.violations().size() ||
        checker.not_understood().size() != reference.not_understood().size()) {
      __builtin_trap();
    }
    return 0;
  }
  if (data[0] % 2 == 0) {
    (void)permitcheck::capture::read_capture_bytes(bytes, &builder);
  } else {
    feed_segments(bytes, &builder);
  }
  checker.finish();
  return 0;
}
