#include "tap/tap.h"

#include <pcap/pcap.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "asio.hpp"

namespace permitcheck::tap {
namespace {

// The capture reader's types: the tap decodes what it forwards as a capture is decoded.
using capture::CaptureOptions;
using capture::encode_ip_packet;
using capture::Endpoint;
using capture::LookupAnswer;
using capture::TcpSegment;
using capture::WireMonitor;
using capture::WireSink;
using capture::WireTraceBuilder;

using asio::ip::tcp;

constexpr std::size_t kReadBuffer = 32 * 1024;  // per direction: the memory bound of forwarding
// The checking thread takes what waits every 2 ms, or at once when 1 MiB waits.
constexpr auto kCheckEvery = std::chrono::milliseconds(2);
constexpr std::size_t kWakeBytes = std::size_t{1} << 20;

absl::StatusOr<std::pair<std::string, std::uint16_t>> split_host_port(const std::string& s) {
  const std::size_t colon = s.rfind(':');
  std::uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(s.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("\"", s, "\": expected HOST:PORT"));
  }
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::make_pair(host, static_cast<std::uint16_t>(port));
}

Endpoint to_endpoint(const tcp::endpoint& e) {
  Endpoint out;
  out.port = e.port();
  if (e.address().is_v4()) {
    const auto b = e.address().to_v4().to_bytes();
    std::copy(b.begin(), b.end(), out.addr.begin());
  } else {
    out.v6 = true;
    const auto b = e.address().to_v6().to_bytes();
    std::copy(b.begin(), b.end(), out.addr.begin());
  }
  return out;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool is_loopback_name(std::string_view host) {
  return host == "localhost" || host == "::1" || host.substr(0, 4) == "127.";
}

}  // namespace

std::optional<std::string> lookup_bypass(const LookupAnswer& answer, std::string_view listen_host,
                                         std::uint16_t listen_port) {
  if (answer.proxy_through || answer.broker_url.empty()) return std::nullopt;
  std::string_view url = answer.broker_url;
  if (const std::size_t scheme = url.find("://"); scheme != std::string_view::npos) {
    url.remove_prefix(scheme + 3);
  }
  if (const std::size_t slash = url.find('/'); slash != std::string_view::npos) {
    url = url.substr(0, slash);
  }
  absl::StatusOr<std::pair<std::string, std::uint16_t>> to = split_host_port(std::string(url));
  if (!to.ok()) return std::string(url);  // somewhere we cannot name: not the tap
  const bool wildcard = listen_host == "0.0.0.0" || listen_host == "::" || listen_host.empty();
  const bool same_host = to->first == listen_host || wildcard ||
                         (is_loopback_name(to->first) && is_loopback_name(listen_host));
  if (same_host && to->second == listen_port) return std::nullopt;
  return std::string(url);
}

// A copy of forwarded bytes (or a SYN, a FIN, a loss) on its way to the checking thread.
struct Copy {
  TcpSegment segment;  // payload empty here: `bytes` holds it
  std::string bytes;
  double time = 0;
  bool lost = false;   // the checker fell behind: the connection is given up
};

struct Tap::Impl {
  struct Session {
    explicit Session(asio::io_context& io) : client(io), upstream(io) {}
    tcp::socket client, upstream;
    std::array<char, kReadBuffer> buffer[2];
    Endpoint side[2];           // 0: the client, 1: the broker
    std::uint32_t seq[2] = {1, 1};
    bool done[2] = {false, false};  // direction d has ended
    bool closed = false;
    bool unchecked = false;     // copies were dropped: checking stopped for this session
    int id = 0;
  };

  TapOptions options;
  WireMonitor* checker;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  tcp::endpoint upstream;
  asio::signal_set signals{io};
  std::map<int, std::shared_ptr<Session>> sessions;
  int next_id = 0;
  bool stopping = false;
  std::atomic<std::uint64_t> connections{0}, to_broker{0}, to_client{0};

  // Checking runs on its own thread, fed by a bounded queue: forwarding never waits for it.
  // Only that thread touches the builder, the checker and the --pcap file.
  WireTraceBuilder builder;
  pcap_t* dead = nullptr;
  pcap_dumper_t* dumper = nullptr;
  std::mutex mu;
  std::condition_variable wake;
  std::deque<Copy> queue;
  std::size_t queued_bytes = 0;
  std::vector<std::string> spare;  // buffers of checked copies, reused
  bool finishing = false;
  std::thread checking;

  // Lookup answers, on the checking thread; read by stats() after run().
  std::string listen_host;
  std::uint16_t listen_port = 0;
  mutable std::mutex lookup_mu;
  std::uint64_t lookups = 0;
  std::vector<std::string> bypassed;
  std::atomic<std::uint64_t> pulsar_connections{0};

  Impl(TapOptions o, WireMonitor* c)
      : options(std::move(o)), checker(c), builder(decode_options(options), with_lookups(c->sink())) {}

  WireSink with_lookups(WireSink sink) {
    sink.lookup = [this](const std::string& connection, const LookupAnswer& a) {
      std::optional<std::string> to = lookup_bypass(a, listen_host, listen_port);
      {
        std::lock_guard<std::mutex> lock(lookup_mu);
        ++lookups;
        if (!to) return;
        if (bypassed.size() < 16 &&
            std::find(bypassed.begin(), bypassed.end(), *to) == bypassed.end()) {
          bypassed.push_back(*to);
        }
      }
      if (options.on_bypass) options.on_bypass(LookupBypass{connection, a.time, *to});
    };
    return sink;
  }

  // Every connection through the tap is meant to be Pulsar: one that is not is reported.
  static CaptureOptions decode_options(const TapOptions& o) {
    CaptureOptions d = o.decode;
    d.compare_copies = false;  // each byte is copied from its socket once: no copy to compare
    absl::StatusOr<std::pair<std::string, std::uint16_t>> up = split_host_port(o.upstream);
    if (up.ok()) d.port = up->second;
    return d;
  }

  // Hands a copy of what was forwarded to the checking thread. When the queue is full the
  // copy is dropped and the session is no longer checked (reported as not understood): the
  // forwarding thread never blocks on checking.
  void record(Session& s, int from, std::string_view bytes, bool syn, bool fin) {
    Copy c;
    c.segment.src = s.side[from];
    c.segment.dst = s.side[1 - from];
    c.segment.seq = s.seq[from];
    c.segment.ack = s.seq[1 - from];
    c.segment.has_ack = !(syn && from == 0);
    c.segment.syn = syn;
    c.segment.fin = fin;
    s.seq[from] += static_cast<std::uint32_t>(bytes.size()) + (syn || fin ? 1 : 0);
    c.time = now_seconds();
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!bytes.empty()) {
        if (s.unchecked) return;
        if (queued_bytes + bytes.size() > options.max_queued_bytes) {
          s.unchecked = true;
          c.lost = true;  // a marker, no bytes: at most one per session
        } else {
          if (!spare.empty()) {
            c.bytes = std::move(spare.back());
            spare.pop_back();
          }
          c.bytes.assign(bytes.data(), bytes.size());
          queued_bytes += bytes.size();
        }
      }
      queue.push_back(std::move(c));
      // Waking the checker for every read would cost the forwarding thread a context switch
      // per message: it wakes on its own every kCheckEvery, or early when much is waiting.
      if (queued_bytes < kWakeBytes && !c.lost) return;
    }
    wake.notify_one();
  }

  void check(Copy& c) {
    if (c.lost) {
      builder.abandon(c.segment.src, c.segment.dst, c.time,
                      absl::StrCat("the checker fell behind (more than ", options.max_queued_bytes,
                                   " bytes waiting): forwarded, no longer checked"));
      return;
    }
    c.segment.payload = c.bytes;
    builder.on_segment(c.time, c.segment);
    if (dumper) {
      const std::string packet = encode_ip_packet(c.segment);
      pcap_pkthdr h{};
      h.ts.tv_sec = static_cast<long>(c.time);
      h.ts.tv_usec = static_cast<long>((c.time - static_cast<double>(h.ts.tv_sec)) * 1e6);
      h.caplen = h.len = static_cast<bpf_u_int32>(packet.size());
      pcap_dump(reinterpret_cast<u_char*>(dumper), &h,
                reinterpret_cast<const u_char*>(packet.data()));
    }
  }

  // The checking thread: copies in batches; quiescence ticks every 100 ms.
  void check_loop() {
    // Below the forwarding thread: when both want a core, forwarding goes first (Linux
    // applies a thread's nice value to that thread alone).
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
    std::deque<Copy> batch;
    double last_tick = now_seconds();
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      wake.wait_for(lock, kCheckEvery, [&] { return queued_bytes >= kWakeBytes || finishing; });
      if (queue.empty() && finishing) return;
      batch.swap(queue);
      queued_bytes = 0;
      lock.unlock();
      for (Copy& c : batch) check(c);
      const double now = now_seconds();
      if (now - last_tick >= 0.1) {
        builder.tick(now);
        last_tick = now;
      }
      lock.lock();
      for (Copy& c : batch) {
        if (c.bytes.capacity() > 0 && spare.size() < 64) spare.push_back(std::move(c.bytes));
      }
      batch.clear();
    }
  }

  void accept() {
    auto s = std::make_shared<Session>(io);
    acceptor.async_accept(s->client, [this, s](const asio::error_code& ec) {
      if (ec || stopping) return;
      s->id = ++next_id;
      sessions[s->id] = s;
      ++connections;
      asio::error_code ignored;
      s->client.set_option(tcp::no_delay(true), ignored);
      s->upstream.async_connect(upstream, [this, s](const asio::error_code& cec) {
        if (cec) {
          close(s);
          return;
        }
        asio::error_code e1, e2;
        s->upstream.set_option(tcp::no_delay(true), e1);
        s->side[0] = to_endpoint(s->client.remote_endpoint(e1));
        s->side[1] = to_endpoint(s->upstream.remote_endpoint(e2));
        record(*s, 0, {}, true, false);
        record(*s, 1, {}, true, false);
        pump(s, 0);
        pump(s, 1);
      });
      accept();
    });
  }

  // Reads from side `from`, forwards, hands a copy to the checker, reads again once the
  // write is done (so at most one buffer per direction is in flight).
  void pump(const std::shared_ptr<Session>& s, int from) {
    tcp::socket& in = from == 0 ? s->client : s->upstream;
    in.async_read_some(asio::buffer(s->buffer[from]),
                       [this, s, from](const asio::error_code& ec, std::size_t n) {
      if (ec) {
        end_direction(s, from);
        return;
      }
      tcp::socket& out = from == 0 ? s->upstream : s->client;
      // The write is tried at once (asio writes speculatively); the copy comes after it.
      asio::async_write(out, asio::buffer(s->buffer[from].data(), n),
                        [this, s, from](const asio::error_code& wec, std::size_t) {
                          if (wec) {
                            close(s);
                            return;
                          }
                          pump(s, from);
                        });
      (from == 0 ? to_broker : to_client) += n;
      record(*s, from, std::string_view(s->buffer[from].data(), n), false, false);
    });
  }

  // Side `from` closed its sending half: pass the half-close on.
  void end_direction(const std::shared_ptr<Session>& s, int from) {
    if (s->closed || s->done[from]) return;
    s->done[from] = true;
    record(*s, from, {}, false, true);
    asio::error_code ignored;
    (from == 0 ? s->upstream : s->client).shutdown(tcp::socket::shutdown_send, ignored);
    if (s->done[0] && s->done[1]) close(s);
  }

  void close(const std::shared_ptr<Session>& s) {
    if (s->closed) return;
    for (int d = 0; d < 2; ++d) {
      if (!s->done[d]) {
        s->done[d] = true;
        record(*s, d, {}, false, true);
      }
    }
    s->closed = true;
    asio::error_code ignored;
    s->client.close(ignored);
    s->upstream.close(ignored);
    sessions.erase(s->id);
  }

  void shutdown() {
    if (stopping) return;
    stopping = true;
    asio::error_code ignored;
    acceptor.close(ignored);
    signals.cancel(ignored);
    auto all = sessions;
    for (auto& [id, s] : all) close(s);
  }
};

Tap::Tap(TapOptions options, WireMonitor* checker)
    : impl_(std::make_unique<Impl>(std::move(options), checker)) {}

Tap::~Tap() {
  if (impl_->dumper) pcap_dump_close(impl_->dumper);
  if (impl_->dead) pcap_close(impl_->dead);
}

absl::Status Tap::start() {
  absl::StatusOr<std::pair<std::string, std::uint16_t>> listen = split_host_port(impl_->options.listen);
  if (!listen.ok()) return absl::InvalidArgumentError(absl::StrCat("--listen ", listen.status().message()));
  absl::StatusOr<std::pair<std::string, std::uint16_t>> up = split_host_port(impl_->options.upstream);
  if (!up.ok()) return absl::InvalidArgumentError(absl::StrCat("--upstream ", up.status().message()));
  asio::error_code ec;
  const asio::ip::address address = asio::ip::make_address(listen->first, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("--listen: \"", listen->first, "\" is not an IP address"));
  tcp::resolver resolver(impl_->io);
  auto resolved = resolver.resolve(up->first, std::to_string(up->second), ec);
  if (ec || resolved.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--upstream: cannot resolve \"", up->first, "\": ", ec.message()));
  }
  impl_->upstream = resolved.begin()->endpoint();
  const tcp::endpoint endpoint(address, listen->second);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot listen on ", impl_->options.listen, ": ", ec.message()));
  impl_->listen_host = listen->first;
  impl_->listen_port = impl_->acceptor.local_endpoint(ec).port();
  if (!impl_->options.pcap_path.empty()) {
    impl_->dead = pcap_open_dead(DLT_RAW, 65535);
    impl_->dumper = impl_->dead ? pcap_dump_open(impl_->dead, impl_->options.pcap_path.c_str()) : nullptr;
    if (!impl_->dumper) {
      return absl::UnavailableError(absl::StrCat("--pcap: cannot write ", impl_->options.pcap_path,
                                                 impl_->dead ? absl::StrCat(": ", pcap_geterr(impl_->dead)) : ""));
    }
  }
  impl_->accept();
  return absl::OkStatus();
}

std::uint16_t Tap::port() const {
  asio::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

void Tap::handle_signals() {
  asio::error_code ignored;
  impl_->signals.add(SIGINT, ignored);
  impl_->signals.add(SIGTERM, ignored);
  impl_->signals.async_wait([this](const asio::error_code& ec, int) {
    if (!ec) impl_->shutdown();
  });
}

void Tap::run() {
  impl_->checking = std::thread([this] { impl_->check_loop(); });
  impl_->io.run();
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->finishing = true;
  }
  impl_->wake.notify_one();
  impl_->checking.join();  // every copy checked
  impl_->builder.finish();
  impl_->pulsar_connections = impl_->builder.stats().pulsar;
  if (impl_->dumper) pcap_dump_flush(impl_->dumper);
}

void Tap::stop() {
  asio::post(impl_->io, [this] { impl_->shutdown(); });
}

TapStats Tap::stats() const {
  std::lock_guard<std::mutex> lock(impl_->lookup_mu);
  return TapStats{.connections = impl_->connections.load(),
                  .bytes_to_broker = impl_->to_broker.load(),
                  .bytes_to_client = impl_->to_client.load(),
                  .pulsar_connections = impl_->pulsar_connections.load(),
                  .lookups = impl_->lookups,
                  .bypassed = impl_->bypassed};
}

}  // namespace permitcheck::tap
