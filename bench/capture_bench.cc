// capture_bench: `validate` of a generated capture (on one thread, as `permitcheck validate`
// does by default, and on two, as with --threads 2) against `tcpdump -r FILE -w /dev/null` reading the same file,
// run after run in one process, medians side by side and their ratios,
// with the peak memory; then the tap's round-trip latency (p50, p99) and the message rate
// through it against a direct connection to the same broker stand-in, in-process, on loopback.
//
//   cmake --build build --target capture_bench
//   build/bench/capture_bench [--mb 128] [--connections 256] [--runs 5] [--dir /tmp]
//                             [--only capture|tap] [--input FILE] [--keep]
//                             [--checker-thread 0|1]
//
// The capture is a realistic mix: many connections of 1-3 Shared consumers each; the broker
// writes 1-4 MESSAGE frames at a time, single messages of 64 B - 64 KiB or batches of 2-20,
// in segments of at most 1448 bytes (Ethernet, IPv4), answered by delayed TCP acks; the client
// acknowledges in groups of 1-8 message ids (a fifth of the batches in two steps, by ack set),
// returns permits with a Flow at half its queue, and answers the broker's pings; a few
// connections are not Pulsar at all (ignored by content).
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "capture/capture_file.h"
#include "capture/wire_monitor.h"
#ifdef PERMITCHECK_HAVE_TAP
#include "tap/tap.h"
#endif
#include "capgen/capture_gen.h"
#include "capgen/loopback.h"

namespace {

using namespace permitcheck::capture;
#ifdef PERMITCHECK_HAVE_TAP
using permitcheck::tap::Tap;
using permitcheck::tap::TapOptions;
#endif
namespace frames = permitcheck::capgen::frames;
namespace capgen = permitcheck::capgen;
namespace wire = permitcheck::wire;
namespace protocol = permitcheck::protocol;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}
// CPU seconds (user + system) of this process, or of its waited-for children.
double cpu_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// ---- the capture ----

std::string message_frame(std::mt19937& rng, const std::string& pool, std::uint64_t consumer,
                          std::uint64_t entry, int b) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::MESSAGE);
  auto* m = c.mutable_message();
  m->set_consumer_id(consumer);
  m->mutable_message_id()->set_ledgerid(7);
  m->mutable_message_id()->set_entryid(entry);
  m->set_redelivery_count(0);
  wire::MessageMetadata meta;
  meta.set_producer_name("producer-" + std::to_string(consumer % 7));
  meta.set_sequence_id(entry);
  meta.set_publish_time(1764600000000ULL + entry);
  auto slice = [&](std::size_t n) { return pool.substr(rng() % (pool.size() - n), n); };
  std::string payload;
  if (b > 1) {
    meta.set_num_messages_in_batch(b);
    std::vector<protocol::BatchMessage> msgs(static_cast<std::size_t>(b));
    for (auto& x : msgs) {
      x.payload = slice(50 + rng() % 150);
      x.metadata.set_payload_size(static_cast<int>(x.payload.size()));
    }
    payload = protocol::encode_batch(msgs);
  } else {
    const unsigned r = rng() % 100;
    payload = slice(r < 70 ? 64 + rng() % 448 : r < 95 ? 1024 + rng() % 3072 : 16384 + rng() % 49152);
  }
  return protocol::encode_message(c, meta.SerializeAsString(), payload);
}

std::string ack_frame(std::uint64_t consumer, const std::vector<std::pair<std::uint64_t, std::vector<std::int64_t>>>& ids) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::ACK);
  auto* a = c.mutable_ack();
  a->set_consumer_id(consumer);
  a->set_ack_type(wire::CommandAck::Individual);
  for (const auto& [entry, ack_set] : ids) {
    auto* id = a->add_message_id();
    id->set_ledgerid(7);
    id->set_entryid(entry);
    for (std::int64_t w : ack_set) id->add_ack_set(w);
  }
  return frames::command(c);
}

std::string ping_frame(bool pong) {
  wire::BaseCommand c;
  c.set_type(pong ? wire::BaseCommand::PONG : wire::BaseCommand::PING);
  if (pong) c.mutable_pong(); else c.mutable_ping();
  return frames::command(c);
}

struct MixStats {
  std::uint64_t packets = 0, messages = 0, batches = 0, acks = 0, flows = 0;
  std::uint64_t message_bytes = 0;
};

MixStats generate(const std::string& path, std::size_t bytes, int connections) {
  constexpr std::size_t kMss = 1448;
  constexpr std::int64_t kQueue = 1000;
  MixStats mix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "capture_bench: cannot write %s\n", path.c_str());
    std::exit(2);
  }
  std::vector<char> filebuf(1 << 20);
  std::setvbuf(f, filebuf.data(), _IOFBF, filebuf.size());
  const std::string header = capgen::pcap_bytes(capgen::LinkKind::kEthernet, {});
  std::fwrite(header.data(), 1, header.size(), f);
  std::size_t written = header.size();
  std::mt19937 rng(491);
  std::string pool(1 << 17, '\0');
  for (char& ch : pool) ch = static_cast<char>('a' + rng() % 26);
  struct Consumer {
    std::int64_t available = 0, returned = 0;
    std::vector<std::pair<std::uint64_t, std::vector<std::int64_t>>> to_ack;
    std::vector<std::pair<std::uint64_t, int>> half_acked;  // entry, B
  };
  struct Conn {
    Endpoint client, server;
    std::uint32_t cseq = 1, sseq = 1;
    bool pulsar = true;
    int unacked_segments = 0;  // the client's delayed ack: one per two segments
    std::vector<Consumer> consumers;
  };
  std::vector<Conn> conns(static_cast<std::size_t>(connections));
  double t = 1764600000;
  std::string frame_buf;
  auto put = [&](Conn& c, bool from_client, std::string_view payload, bool syn) {
    capgen::Packet p;
    p.time = t;
    t += 0.000005;
    p.src = from_client ? c.client : c.server;
    p.dst = from_client ? c.server : c.client;
    std::uint32_t& seq = from_client ? c.cseq : c.sseq;
    p.seq = seq;
    p.ack = from_client ? c.sseq : c.cseq;
    p.syn = syn;
    p.has_ack = !(syn && from_client);
    p.payload = std::string(payload);
    seq += static_cast<std::uint32_t>(payload.size()) + (syn ? 1 : 0);
    const std::string frame = capgen::link_frame(capgen::LinkKind::kEthernet, p);
    const auto secs = static_cast<std::uint32_t>(p.time);
    const std::string rec = capgen::le32(secs) +
                            capgen::le32(static_cast<std::uint32_t>((p.time - secs) * 1e6)) +
                            capgen::le32(static_cast<std::uint32_t>(frame.size())) +
                            capgen::le32(static_cast<std::uint32_t>(frame.size()));
    std::fwrite(rec.data(), 1, rec.size(), f);
    std::fwrite(frame.data(), 1, frame.size(), f);
    written += rec.size() + frame.size();
    ++mix.packets;
  };
  // A write of one side, cut into segments; the receiver acks every second one.
  auto send = [&](Conn& c, bool from_client, const std::string& data) {
    for (std::size_t at = 0; at < data.size(); at += kMss) {
      put(c, from_client, std::string_view(data).substr(at, kMss), false);
      if (++c.unacked_segments >= 2) {
        put(c, !from_client, {}, false);
        c.unacked_segments = 0;
      }
    }
  };
  for (int i = 0; i < connections; ++i) {
    Conn& c = conns[static_cast<std::size_t>(i)];
    c.client = capgen::endpoint4(static_cast<std::uint8_t>(10 + i % 200), static_cast<std::uint16_t>(30000 + i));
    c.server = capgen::endpoint4(2, 6650);
    c.pulsar = i % 32 != 31;  // a few connections are something else
    put(c, true, "", true);
    put(c, false, "", true);
    if (!c.pulsar) continue;
    c.consumers.resize(1 + rng() % 3);
    std::string hello = frames::connect(), answer = frames::connected();
    for (std::size_t k = 0; k < c.consumers.size(); ++k) {
      hello += frames::subscribe(k, k + 1);
      answer += frames::success(k + 1);
    }
    send(c, true, hello);
    send(c, false, answer);
    std::string flows;
    for (std::size_t k = 0; k < c.consumers.size(); ++k) {
      flows += frames::flow(k, static_cast<std::uint32_t>(kQueue));
      c.consumers[k].available = kQueue;
      ++mix.flows;
    }
    send(c, true, flows);
  }
  std::uint64_t entry = 0;
  std::string out, back;
  while (written < bytes) {
    Conn& c = conns[rng() % conns.size()];
    if (!c.pulsar) {
      send(c, rng() % 2 == 0, pool.substr(rng() % 1000, 200 + rng() % 1000));
      continue;
    }
    out.clear();
    back.clear();
    const int writes = 1 + static_cast<int>(rng() % 4);
    for (int w = 0; w < writes; ++w) {
      const std::size_t k = rng() % c.consumers.size();
      Consumer& s = c.consumers[k];
      const int b = rng() % 10 < 4 ? 2 + static_cast<int>(rng() % 19) : 1;
      if (s.available < b) continue;
      out += message_frame(rng, pool, k, ++entry, b);
      s.available -= b;
      ++mix.messages;
      mix.batches += b > 1;
      if (b > 1 && rng() % 5 == 0) {
        // Half of the batch acknowledged now (the ack set keeps the other half), the rest later.
        const std::int64_t rest = ((std::int64_t{1} << b) - 1) & ~((std::int64_t{1} << (b / 2)) - 1);
        s.to_ack.push_back({entry, {rest}});
        s.half_acked.push_back({entry, b});
      } else {
        s.to_ack.push_back({entry, {}});
        s.returned += b;
      }
    }
    if (out.empty()) continue;
    mix.message_bytes += out.size();
    const bool ping = rng() % 50 == 0;
    if (ping) out += ping_frame(false);
    send(c, false, out);
    if (ping) back += ping_frame(true);
    for (std::size_t k = 0; k < c.consumers.size(); ++k) {
      Consumer& s = c.consumers[k];
      if (s.to_ack.size() >= 1 + rng() % 8) {
        for (const auto& [e, b] : s.half_acked) s.to_ack.push_back({e, {}}), s.returned += b;
        s.half_acked.clear();
        back += ack_frame(k, s.to_ack);
        ++mix.acks;
        s.to_ack.clear();
      }
      if (s.returned >= kQueue / 2) {
        back += frames::flow(k, static_cast<std::uint32_t>(s.returned));
        s.available += s.returned;
        s.returned = 0;
        ++mix.flows;
      }
    }
    if (!back.empty()) send(c, true, back);
  }
  std::fclose(f);
  return mix;
}

struct ValidateRun {
  double seconds = 0, cpu = 0;
  std::uint64_t events = 0, violations = 0, not_understood = 0;
};
bool g_checker_thread = false;  // --checker-thread 1: check on the checker's own thread

// `permitcheck validate` of a capture (reader_thread: --threads 2, libpcap on a second thread).
ValidateRun validate(const std::string& path, bool reader_thread) {
  const auto start = Clock::now();
  const double cpu0 = cpu_seconds(RUSAGE_SELF);
  WireMonitor checker(permitcheck::spec::TraceHeader{.source = permitcheck::spec::TraceSource::kWire}, nullptr);
  if (g_checker_thread) checker.check_on_own_thread();
  WireTraceBuilder builder(CaptureOptions{}, checker.sink());
  const absl::Status s = read_capture_file(path, &builder, reader_thread);
  checker.finish();
  if (!s.ok()) std::fprintf(stderr, "validate: %s\n", std::string(s.message()).c_str());
  return {seconds_since(start), cpu_seconds(RUSAGE_SELF) - cpu0, checker.events(),
          checker.violations().size(), checker.not_understood().size()};
}

// Reading and decoding alone: the events are counted, not checked.
ValidateRun decode_only(const std::string& path) {
  const auto start = Clock::now();
  ValidateRun r;
  WireTraceBuilder builder(CaptureOptions{}, WireSink{.event = [&](const std::string&, TimedEvent&&) { ++r.events; }});
  (void)read_capture_file(path, &builder);
  r.seconds = seconds_since(start);
  return r;
}

// Wall and CPU seconds of `tcpdump -r FILE -w /dev/null`; wall < 0 when it failed.
std::pair<double, double> tcpdump(const std::string& path) {
  const auto start = Clock::now();
  const double cpu0 = cpu_seconds(RUSAGE_CHILDREN);
  const int rc = std::system(("tcpdump -r " + path + " -w /dev/null 2>/dev/null").c_str());
  const double s = seconds_since(start);
  return {rc == 0 ? s : -1, cpu_seconds(RUSAGE_CHILDREN) - cpu0};
}

// The machine is shared: wall-clock rates move with the load, CPU-time rates (user + system
// of each reader alone) much less, so both are shown. Each run reads the file with validate on
// two threads (--threads 2), on one (the default), and with tcpdump, in turn.
void bench_capture(const std::string& path, double mib, int runs) {
  std::vector<double> two, one, theirs, two_cpu, one_cpu, theirs_cpu;
  ValidateRun last;
  std::printf("%-4s %14s %14s %14s %7s %7s   %20s %7s %7s\n", "run", "2 threads MiB/s",
              "1 thread MiB/s", "tcpdump MiB/s", "ratio2", "ratio1",
              "MiB/cpu-s 2 / 1 / td", "ratio2", "ratio1");
  for (int r = 0; r < runs; ++r) {
    const ValidateRun a = validate(path, true);
    last = validate(path, false);
    const auto [td, td_cpu] = tcpdump(path);
    if (td < 0) {
      std::printf("tcpdump -r FILE -w /dev/null failed: no ratio\n");
      return;
    }
    two.push_back(mib / a.seconds);
    one.push_back(mib / last.seconds);
    theirs.push_back(mib / td);
    two_cpu.push_back(mib / a.cpu);
    one_cpu.push_back(mib / last.cpu);
    theirs_cpu.push_back(mib / td_cpu);
    std::printf("%-4d %14.1f %14.1f %14.1f %7.2f %7.2f   %6.0f / %4.0f / %4.0f %7.2f %7.2f\n",
                r + 1, two.back(), one.back(), theirs.back(), two.back() / theirs.back(),
                one.back() / theirs.back(), two_cpu.back(), one_cpu.back(), theirs_cpu.back(),
                two_cpu.back() / theirs_cpu.back(), one_cpu.back() / theirs_cpu.back());
    if (a.events != last.events || a.violations != last.violations) {
      std::printf("validate on two threads and on one disagree: %llu / %llu events\n",
                  static_cast<unsigned long long>(a.events),
                  static_cast<unsigned long long>(last.events));
      return;
    }
  }
  const ValidateRun d = decode_only(path);
  std::printf("median wall clock: validate %.1f MiB/s on 2 threads, %.1f on 1; tcpdump -r FILE "
              "-w /dev/null %.1f MiB/s; ratio %.2f on 2 threads, %.2f on 1 (target >= 0.7 on 1)\n",
              median(two), median(one), median(theirs), median(two) / median(theirs),
              median(one) / median(theirs));
  std::printf("median CPU time:   validate %.1f MiB/s on 2 threads, %.1f on 1; tcpdump %.1f "
              "MiB/s; ratio %.2f on 2 threads, %.2f on 1\n",
              median(two_cpu), median(one_cpu), median(theirs_cpu),
              median(two_cpu) / median(theirs_cpu), median(one_cpu) / median(theirs_cpu));
  std::printf("validate: %llu events, %llu violations, %llu not understood; decoding alone "
              "(no monitor) %.1f MiB/s\n",
              static_cast<unsigned long long>(last.events),
              static_cast<unsigned long long>(last.violations),
              static_cast<unsigned long long>(last.not_understood), mib / d.seconds);
  std::printf("peak RSS of this process: %ld MB\n", peak_rss_kb() / 1024);
}

// ---- the tap ----
#ifdef PERMITCHECK_HAVE_TAP
struct TapRun {
  double p50_us = 0, p99_us = 0, msgs_per_second = 0;
  double checked_per_second = 0;  // until the last one was checked (the tap), or received
  std::uint64_t checked = 0, not_understood = 0;
};

// A broker stand-in: answers the handshake, echoes `rounds` frames one by one (latency), then
// sends `messages` MESSAGE frames of 100-byte payloads in one go (rate).
TapRun measure(bool through_tap, int rounds, int messages) {
  using namespace capgen;
  std::uint16_t broker_port = 0;
  const int listener = listen_loopback(&broker_port);
  const std::string hello = frames::connect() + frames::subscribe(0, 1);
  const std::string answer = frames::connected() + frames::success(1);
  const std::string ping = frames::flow(0, 1000000000);  // Q: no over-grant in the rate part
  std::string burst;
  {
    wire::BaseCommand c;
    c.set_type(wire::BaseCommand::MESSAGE);
    wire::MessageMetadata meta;
    meta.set_producer_name("bench");
    meta.set_sequence_id(1);
    meta.set_publish_time(1764600000000ULL);
    const std::string payload(100, 'p');
    for (int i = 0; i < messages; ++i) {
      c.mutable_message()->set_consumer_id(0);
      c.mutable_message()->mutable_message_id()->set_ledgerid(7);
      c.mutable_message()->mutable_message_id()->set_entryid(static_cast<std::uint64_t>(i + 1));
      burst += protocol::encode_message(c, meta.SerializeAsString(), payload);
    }
  }
  std::thread broker([&] {
    const int fd = accept_one(listener);
    std::string buf(hello.size(), '\0');
    read_exact(fd, buf.data(), buf.size());
    send_all(fd, answer);
    std::string p(ping.size(), '\0');
    for (int i = 0; i < rounds; ++i) {
      if (!read_exact(fd, p.data(), p.size())) break;
      send_all(fd, p);
    }
    send_all(fd, burst);
    ::shutdown(fd, SHUT_WR);
    (void)read_all(fd);
    ::close(fd);
  });
  WireMonitor checker(permitcheck::spec::TraceHeader{.source = permitcheck::spec::TraceSource::kWire}, nullptr);
  std::unique_ptr<Tap> tap;
  std::thread serving;
  std::uint16_t port = broker_port;
  if (through_tap) {
    tap = std::make_unique<Tap>(TapOptions{.listen = "127.0.0.1:0", .upstream = "127.0.0.1:" + std::to_string(broker_port)}, &checker);
    (void)tap->start();
    port = tap->port();
    serving = std::thread([&] { tap->run(); });
  }
  const int fd = connect_loopback(port);
  send_all(fd, hello);
  std::string buf(answer.size(), '\0');
  read_exact(fd, buf.data(), buf.size());
  std::vector<double> us;
  std::string p(ping.size(), '\0');
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = Clock::now();
    send_all(fd, ping);
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
    serving.join();  // returns once every copy has been checked
  }
  const double checked_s = seconds_since(t1);
  ::close(listener);
  checker.finish();
  std::sort(us.begin(), us.end());
  TapRun r;
  r.p50_us = us[us.size() / 2];
  r.p99_us = us[us.size() * 99 / 100];
  r.msgs_per_second = messages / burst_s;
  r.checked_per_second = messages / checked_s;
  r.checked = checker.events();
  r.not_understood = checker.not_understood().size();
  return r;
}

void bench_tap(int runs) {
  constexpr int kRounds = 20000, kMessages = 200000;
  std::vector<double> d50, d99, drate, t50, t99, trate, tchecked;
  std::printf("%-4s %-12s %10s %10s %14s\n", "run", "path", "p50 us", "p99 us", "messages/s");
  TapRun tapped;
  for (int r = 0; r < runs; ++r) {
    const TapRun direct = measure(false, kRounds, kMessages);
    tapped = measure(true, kRounds, kMessages);
    d50.push_back(direct.p50_us), d99.push_back(direct.p99_us), drate.push_back(direct.msgs_per_second);
    t50.push_back(tapped.p50_us), t99.push_back(tapped.p99_us), trate.push_back(tapped.msgs_per_second);
    tchecked.push_back(tapped.checked_per_second);
    std::printf("%-4d %-12s %10.1f %10.1f %14.0f\n", r + 1, "direct", direct.p50_us, direct.p99_us, direct.msgs_per_second);
    std::printf("%-4d %-12s %10.1f %10.1f %14.0f  (%.0f/s checked; %llu events checked, %llu not understood)\n", r + 1,
                "through tap", tapped.p50_us, tapped.p99_us, tapped.msgs_per_second, tapped.checked_per_second,
                static_cast<unsigned long long>(tapped.checked),
                static_cast<unsigned long long>(tapped.not_understood));
  }
  std::printf("median: direct p50 %.1f us p99 %.1f us; through the tap p50 %.1f us p99 %.1f us "
              "(ratio p50 %.1fx, p99 %.1fx)\n",
              median(d50), median(d99), median(t50), median(t99), median(t50) / median(d50),
              median(t99) / median(d99));
  std::printf("the tap adds p50 %.1f us, p99 %.1f us (target p99 < 1000 us added); rate through "
              "it %.0f messages/s forwarded, %.0f messages/s forwarded and checked (target >= 50000); "
              "direct %.0f messages/s\n",
              median(t50) - median(d50), median(t99) - median(d99), median(trate),
              median(tchecked), median(drate));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::size_t mb = 128;
  int connections = 256, runs = 5;
  std::string dir = "/tmp", only, input;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--keep") { keep = true; continue; }
    if (a == "--mb") mb = std::strtoul(v, nullptr, 10);
    else if (a == "--connections") connections = std::max(1, std::atoi(v));
    else if (a == "--runs") runs = std::max(1, std::atoi(v));
    else if (a == "--dir") dir = v;
    else if (a == "--only") only = v;
    else if (a == "--input") input = v;
    else if (a == "--checker-thread") g_checker_thread = std::atoi(v) != 0;
    else {
      std::fprintf(stderr, "usage: capture_bench [--mb N] [--connections N] [--runs N] [--dir D] "
                           "[--only capture|tap] [--input FILE] [--keep] [--checker-thread 0|1]\n");
      return 2;
    }
    ++i;
  }
  if (only != "tap") {
    std::string path = input;
    double mib = 0;
    if (path.empty()) {
      path = dir + "/capture_bench.pcap";
      const auto start = Clock::now();
      const MixStats mix = generate(path, mb << 20, connections);
      std::printf("capture_bench: %zu MiB capture of %d connections (%s), generated in %.1f s: "
                  "%llu packets, %llu MESSAGE frames (%llu batches), mean %llu bytes per "
                  "MESSAGE frame, %llu acks, %llu flows\n",
                  mb, connections, path.c_str(), seconds_since(start),
                  static_cast<unsigned long long>(mix.packets), static_cast<unsigned long long>(mix.messages),
                  static_cast<unsigned long long>(mix.batches),
                  static_cast<unsigned long long>(mix.message_bytes / std::max<std::uint64_t>(1, mix.messages)),
                  static_cast<unsigned long long>(mix.acks), static_cast<unsigned long long>(mix.flows));
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      std::fprintf(stderr, "capture_bench: cannot read %s\n", path.c_str());
      return 2;
    }
    std::fseek(f, 0, SEEK_END);
    mib = static_cast<double>(std::ftell(f)) / (1 << 20);
    std::fclose(f);
    bench_capture(path, mib, runs);
    if (input.empty() && !keep) std::remove(path.c_str());
  }
#ifdef PERMITCHECK_HAVE_TAP
  if (only != "capture") bench_tap(runs);
#endif
  return 0;
}
