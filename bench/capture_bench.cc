// capture_bench: `validate` of a generated capture against `tcpdump -r FILE -w /dev/null`
// reading the same file, side by side in one run, with the peak memory at two capture sizes
// (constant in the length); then the tap's added round-trip latency (p50, p99) and the
// message rate through it against a direct connection, in-process, on loopback.
//
//   cmake --build build --target capture_bench
//   build/bench/capture_bench [--mb 1024] [--connections 64] [--dir /tmp]
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "capture/capture_file.h"
#include "capture/checker.h"
#include "capture/tap.h"
#include "tests/capture/capture_testing.h"

namespace {

using namespace permitcheck::capture;
namespace frames = testing::frames;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// Writes a capture of `connections` consumers (Ethernet, IPv4), interleaved, until `bytes`:
// entries of 1-10 messages (a batch when more than one), each acknowledged, a Flow back at every
// 500 permits returned: small frames, the decoder's hardest case per byte.
void generate(const std::string& path, std::size_t bytes, int connections) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  const std::string header = testing::pcap_bytes(testing::LinkKind::kEthernet, {});
  std::fwrite(header.data(), 1, header.size(), f);
  std::size_t written = header.size();
  struct Conn {
    Endpoint client, server;
    std::uint32_t cseq = 1, sseq = 1;
    std::int64_t available = 0, returned = 0;
    std::uint64_t entry = 0;
  };
  std::vector<Conn> conns(static_cast<std::size_t>(connections));
  double t = 1764600000;
  auto put = [&](Conn& c, bool from_client, const std::string& payload, bool syn) {
    testing::Packet p;
    p.time = t;
    t += 0.00001;
    p.src = from_client ? c.client : c.server;
    p.dst = from_client ? c.server : c.client;
    std::uint32_t& seq = from_client ? c.cseq : c.sseq;
    p.seq = seq;
    p.ack = from_client ? c.sseq : c.cseq;
    p.syn = syn;
    p.has_ack = !(syn && from_client);
    p.payload = payload;
    seq += static_cast<std::uint32_t>(payload.size()) + (syn ? 1 : 0);
    const std::string frame = testing::link_frame(testing::LinkKind::kEthernet, p);
    const auto secs = static_cast<std::uint32_t>(p.time);
    const std::string rec = testing::le32(secs) +
                            testing::le32(static_cast<std::uint32_t>((p.time - secs) * 1e6)) +
                            testing::le32(static_cast<std::uint32_t>(frame.size())) +
                            testing::le32(static_cast<std::uint32_t>(frame.size()));
    std::fwrite(rec.data(), 1, rec.size(), f);
    std::fwrite(frame.data(), 1, frame.size(), f);
    written += rec.size() + frame.size();
  };
  std::mt19937 rng(491);
  for (int i = 0; i < connections; ++i) {
    Conn& c = conns[static_cast<std::size_t>(i)];
    c.client = testing::endpoint4(static_cast<std::uint8_t>(10 + i % 200), static_cast<std::uint16_t>(30000 + i));
    c.server = testing::endpoint4(2, 6650);
    put(c, true, "", true);
    put(c, false, "", true);
    put(c, true, frames::connect() + frames::subscribe(0, 1), false);
    put(c, false, frames::connected() + frames::success(1), false);
    put(c, true, frames::flow(0, 1000), false);
    c.available = 1000;
  }
  std::string mix;
  while (written < bytes) {
    Conn& c = conns[rng() % conns.size()];
    const int b = 1 + static_cast<int>(rng() % 10);
    if (c.available < b) continue;
    const std::string m = frames::message(0, ++c.entry, b, {}, static_cast<std::uint32_t>(b));
    c.available -= b;
    put(c, false, m, false);
    std::string back = frames::ack(0, c.entry);
    c.returned += b;
    if (c.returned >= 500) {
      back += frames::flow(0, static_cast<std::uint32_t>(c.returned));
      c.available += c.returned;
      c.returned = 0;
    }
    put(c, true, back, false);
  }
  std::fclose(f);
}

struct ValidateRun {
  double seconds = 0;
  std::uint64_t events = 0, violations = 0;
};
ValidateRun validate(const std::string& path) {
  const auto start = Clock::now();
  WireChecker checker(permitcheck::spec::TraceHeader{.source = permitcheck::spec::TraceSource::kWire}, nullptr);
  WireTraceBuilder builder(CaptureOptions{}, checker.sink());
  const absl::Status s = read_capture_file(path, &builder);
  checker.finish();
  if (!s.ok()) std::fprintf(stderr, "validate: %s\n", std::string(s.message()).c_str());
  return {seconds_since(start), checker.events(), checker.violations().size()};
}

// Reading and decoding alone: the events are counted, not checked.
ValidateRun decode_only(const std::string& path) {
  const auto start = Clock::now();
  ValidateRun r;
  WireTraceBuilder builder(CaptureOptions{}, WireSink{.event = [&](const std::string&, const TimedEvent&) { ++r.events; }});
  (void)read_capture_file(path, &builder);
  r.seconds = seconds_since(start);
  return r;
}

double tcpdump(const std::string& path) {
  const auto start = Clock::now();
  const int rc = std::system(("tcpdump -r " + path + " -w /dev/null 2>/dev/null").c_str());
  const double s = seconds_since(start);
  return rc == 0 ? s : -1;
}

// ---- tap ----
int listen_any(std::uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(fd, 4);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}
int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, 1 /*TCP_NODELAY*/, &one, sizeof one);
  return fd;
}
bool read_exact(int fd, char* buf, std::size_t n) {
  for (std::size_t at = 0; at < n;) {
    const ssize_t r = ::read(fd, buf + at, n - at);
    if (r <= 0) return false;
    at += static_cast<std::size_t>(r);
  }
  return true;
}
void write_all(int fd, const std::string& s) {
  for (std::size_t at = 0; at < s.size();) {
    const ssize_t w = ::write(fd, s.data() + at, s.size() - at);
    if (w <= 0) return;
    at += static_cast<std::size_t>(w);
  }
}

struct TapRun {
  double p50_us = 0, p99_us = 0, msgs_per_second = 0;
};

// A broker stand-in: answers the handshake, echoes `rounds` frames of `frame_size` bytes one
// by one (latency), then sends `messages` MESSAGE frames in one go (rate).
TapRun measure(bool through_tap, int rounds, int messages) {
  std::uint16_t broker_port = 0;
  const int listener = listen_any(&broker_port);
  const std::string hello = frames::connect() + frames::subscribe(0, 1);
  const std::string answer = frames::connected() + frames::success(1);
  const std::string ping = frames::flow(0, 1000000000);  // Q: no over-grant in the rate part
  std::string burst;
  for (int i = 0; i < messages; ++i) burst += frames::message(0, static_cast<std::uint64_t>(i + 1), 1, {}, 1);
  std::thread broker([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, 1, &one, sizeof one);
    std::string buf(hello.size(), '\0');
    read_exact(fd, buf.data(), buf.size());
    write_all(fd, answer);
    std::string p(ping.size(), '\0');
    for (int i = 0; i < rounds; ++i) {
      if (!read_exact(fd, p.data(), p.size())) break;
      write_all(fd, p);
    }
    write_all(fd, burst);
    ::shutdown(fd, SHUT_WR);
    char tmp[256];
    while (::read(fd, tmp, sizeof tmp) > 0) {
    }
    ::close(fd);
  });
  WireChecker checker(permitcheck::spec::TraceHeader{.source = permitcheck::spec::TraceSource::kWire}, nullptr);
  std::unique_ptr<Tap> tap;
  std::thread serving;
  std::uint16_t port = broker_port;
  if (through_tap) {
    tap = std::make_unique<Tap>(TapOptions{.listen = "127.0.0.1:0", .upstream = "127.0.0.1:" + std::to_string(broker_port)}, &checker);
    (void)tap->start();
    port = tap->port();
    serving = std::thread([&] { tap->run(); });
  }
  const int fd = connect_to(port);
  write_all(fd, hello);
  std::string buf(answer.size(), '\0');
  read_exact(fd, buf.data(), buf.size());
  std::vector<double> us;
  std::string p(ping.size(), '\0');
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = Clock::now();
    write_all(fd, ping);
    read_exact(fd, p.data(), p.size());
    us.push_back(seconds_since(t0) * 1e6);
  }
  const auto t1 = Clock::now();
  std::string all(burst.size(), '\0');
  read_exact(fd, all.data(), all.size());
  const double burst_s = seconds_since(t1);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
  broker.join();
  if (tap) {
    tap->stop();
    serving.join();
  }
  ::close(listener);
  std::sort(us.begin(), us.end());
  TapRun r;
  r.p50_us = us[us.size() / 2];
  r.p99_us = us[us.size() * 99 / 100];
  r.msgs_per_second = messages / burst_s;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mb = 256;
  int connections = 64;
  std::string dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mb")) mb = std::strtoul(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--connections")) connections = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
  }
  const std::string small = dir + "/capture_bench_small.pcap", large = dir + "/capture_bench.pcap";
  generate(small, (mb << 20) / 4, connections);
  generate(large, mb << 20, connections);
  std::printf("capture_bench: %d connections, %zu MiB and %zu MiB captures (%s)\n", connections,
              mb / 4, mb, large.c_str());
  const ValidateRun d = decode_only(large);
  const long rss0 = peak_rss_mb();
  const ValidateRun vs = validate(small);
  const long rss_small = peak_rss_mb();
  const ValidateRun v = validate(large);
  const long rss_large = peak_rss_mb();
  const double td = tcpdump(large);
  const double mib = static_cast<double>(mb);
  std::printf("%-34s %10s %12s %10s\n", "reader", "seconds", "MiB/s", "peak RSS");
  std::printf("%-34s %10.2f %12.1f %7ld MB (%llu events, %llu violations)\n", "validate (small capture)",
              vs.seconds, mib / 4 / vs.seconds, rss_small, static_cast<unsigned long long>(vs.events),
              static_cast<unsigned long long>(vs.violations));
  std::printf("%-34s %10.2f %12.1f %7ld MB (%llu events, %llu violations)\n", "validate", v.seconds,
              mib / v.seconds, rss_large, static_cast<unsigned long long>(v.events),
              static_cast<unsigned long long>(v.violations));
  std::printf("%-34s %10.2f %12.1f %7ld MB (%llu events)\n", "decode only (no monitor)", d.seconds,
              mib / d.seconds, rss0, static_cast<unsigned long long>(d.events));
  if (td > 0) {
    std::printf("%-34s %10.2f %12.1f\n", "tcpdump -r FILE -w /dev/null", td, mib / td);
    std::printf("ratio validate / tcpdump throughput: %.2f (target >= 0.5)\n", td / v.seconds);
  } else {
    std::printf("tcpdump not available: no ratio\n");
  }
  std::printf("peak RSS after decoding alone %ld MB, before validating %ld MB, after the small capture %ld MB, after the large %ld MB\n",
              rss0, rss0, rss_small, rss_large);
  const TapRun direct = measure(false, 20000, 200000);
  const TapRun tapped = measure(true, 20000, 200000);
  std::printf("%-12s %10s %10s %14s\n", "path", "p50 us", "p99 us", "messages/s");
  std::printf("%-12s %10.1f %10.1f %14.0f\n", "direct", direct.p50_us, direct.p99_us, direct.msgs_per_second);
  std::printf("%-12s %10.1f %10.1f %14.0f\n", "through tap", tapped.p50_us, tapped.p99_us, tapped.msgs_per_second);
  std::printf("tap adds p50 %.1f us, p99 %.1f us (target p99 < 1000 us); rate %.0f messages/s (target >= 50000)\n",
              tapped.p50_us - direct.p50_us, tapped.p99_us - direct.p99_us, tapped.msgs_per_second);
  std::remove(small.c_str());
  std::remove(large.c_str());
  return 0;
}
