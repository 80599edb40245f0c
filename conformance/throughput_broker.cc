#include "conformance/throughput_broker.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "asio.hpp"
#include "conformance/broker.h"
#include "conformance/internal/entry_frame.h"
#include "conformance/internal/handshake.h"
#include "conformance/internal/listener.h"
#include "conformance/internal/write_queue.h"
#include "protocol/frame.h"

namespace permitcheck::conformance {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kLedger = 7;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace

struct ThroughputBroker::Impl {
  struct Conn {
    int id = 0;
    tcp::socket socket;
    std::array<char, 65536> buffer{};
    protocol::FrameSplitter splitter;
    internal::WriteQueue writes{socket, 0};  // unbounded: the bench serves well-behaved clients
    bool closed = false;
    explicit Conn(asio::io_context& io) : socket(io) {}
  };
  // The consumer being served. Entry e (1-based) is message e of the session: entries up to
  // latency_messages make phase 1, the rest phase 2.
  struct Session {
    int cnx = 0;
    std::uint64_t consumer = 0;
    std::int64_t granted = 0;
    int flows = 0;
    std::int64_t acks = 0;
    std::uint64_t sent = 0;   // entries 1..sent written
    std::uint64_t acked = 0;  // distinct entries acknowledged
    std::uint64_t acked_below = 0;  // every entry <= acked_below is acknowledged
    std::vector<Clock::time_point> written;  // per entry (index e - 1)
    std::vector<Clock::time_point> ack_read;
    std::vector<bool> is_acked;
  };

  explicit Impl(ThroughputOptions o) : options(o) {}

  const ThroughputOptions options;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::string url;
  int next_conn = 0;

  std::mutex mu;  // guards session, finished
  std::condition_variable cv;
  std::optional<Session> session;
  struct Finished {
    absl::Status status;  // not OK: the session was cut short, and why
    ThroughputSession session;
  };
  std::deque<Finished> finished;
  std::map<int, std::shared_ptr<Conn>> conns;  // io thread only

  std::uint64_t total() const {
    return static_cast<std::uint64_t>(options.latency_messages) +
           static_cast<std::uint64_t>(options.rate_messages);
  }

  void accept() {
    auto conn = std::make_shared<Conn>(io);
    acceptor.async_accept(conn->socket, [this, conn](const asio::error_code& ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        conn->id = ++next_conn;
        conns[conn->id] = conn;
        asio::error_code ignored;
        conn->socket.set_option(tcp::no_delay(true), ignored);
        read(conn);
      }
      accept();
    });
  }

  void read(const std::shared_ptr<Conn>& conn) {
    conn->socket.async_read_some(
        asio::buffer(conn->buffer), [this, conn](const asio::error_code& ec, std::size_t n) {
          if (ec) {
            close(conn);
            return;
          }
          const Clock::time_point read_at = Clock::now();  // every ACK of this read
          conn->splitter.append(std::string_view(conn->buffer.data(), n));
          while (true) {
            absl::StatusOr<std::optional<std::string>> f = conn->splitter.next();
            if (f.ok() && !f->has_value()) break;
            absl::StatusOr<protocol::Frame> frame = f.ok() ? protocol::decode_frame(**f) : f.status();
            if (!frame.ok()) {  // garbage: this bench serves well-formed clients only
              abort_session(conn->id, absl::StrCat("connection ", conn->id, ": ",
                                                   frame.status().message()));
              close(conn);
              return;
            }
            handle(conn, frame->command, read_at);
            if (conn->closed) return;
          }
          read(conn);
        });
  }

  void close(const std::shared_ptr<Conn>& conn) {
    if (conn->closed) return;
    conn->closed = true;
    conn->writes.close();
    abort_session(conn->id, "the consumer's connection closed before every message was acked");
    conns.erase(conn->id);
    asio::error_code ignored;
    conn->socket.shutdown(tcp::socket::shutdown_both, ignored);
    conn->socket.close(ignored);
  }

  void write(const std::shared_ptr<Conn>& conn, std::string bytes) {
    // Unbounded: push never fails.
    (void)conn->writes.push(std::move(bytes), conn, [this, conn] { close(conn); });
  }

  void handle(const std::shared_ptr<Conn>& conn, const wire::BaseCommand& in,
              Clock::time_point read_at) {
    if (std::optional<wire::BaseCommand> answer = internal::handshake_answer(in, url)) {
      // The client stays on the address it was given (a tap in front of this broker), as
      // Pulsar's proxies ask: proxy_through_service_url.
      if (answer->has_lookuptopicresponse()) {
        answer->mutable_lookuptopicresponse()->set_proxy_through_service_url(true);
      }
      write(conn, protocol::encode_command(*answer));
      return;
    }
    wire::BaseCommand out;
    switch (in.type()) {
      case wire::BaseCommand::SUBSCRIBE: {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (session) {
            fail_locked("a new SUBSCRIBE replaced the consumer before every message was acked");
          }
          session = Session{.cnx = conn->id, .consumer = in.subscribe().consumer_id()};
          session->written.resize(total());
          session->ack_read.resize(total());
          session->is_acked.resize(total());
        }
        out.set_type(wire::BaseCommand::SUCCESS);
        out.mutable_success()->set_request_id(in.subscribe().request_id());
        write(conn, protocol::encode_command(out));
        return;
      }
      case wire::BaseCommand::FLOW: {
        std::lock_guard<std::mutex> lock(mu);
        if (!serves(conn->id, in.flow().consumer_id())) return;
        session->granted += in.flow().messagepermits();
        ++session->flows;
        dispatch_locked(conn);
        return;
      }
      case wire::BaseCommand::ACK: {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (serves(conn->id, in.ack().consumer_id())) {
            ++session->acks;
            for (const wire::MessageIdData& id : in.ack().message_id()) {
              on_acked(id.entryid(), in.ack().ack_type() == wire::CommandAck::Cumulative,
                       read_at);
            }
            if (session->acked == total()) {
              finish_locked();
            } else {
              dispatch_locked(conn);
            }
          }
        }
        if (in.ack().has_request_id()) {
          out.set_type(wire::BaseCommand::ACK_RESPONSE);
          out.mutable_ackresponse()->set_consumer_id(in.ack().consumer_id());
          out.mutable_ackresponse()->set_request_id(in.ack().request_id());
          write(conn, protocol::encode_command(out));
        }
        return;
      }
      case wire::BaseCommand::CLOSE_CONSUMER:
      case wire::BaseCommand::UNSUBSCRIBE: {
        const bool close = in.type() == wire::BaseCommand::CLOSE_CONSUMER;
        abort_session(conn->id, "the consumer closed before every message was acked");
        out.set_type(wire::BaseCommand::SUCCESS);
        out.mutable_success()->set_request_id(close ? in.close_consumer().request_id()
                                                    : in.unsubscribe().request_id());
        write(conn, protocol::encode_command(out));
        return;
      }
      default:
        return;  // PONG, ACK_RESPONSE, anything else: nothing to answer for the bench
    }
  }

  // REQUIRES: mu held.
  bool serves(int cnx, std::uint64_t consumer) const {
    return session && session->cnx == cnx && session->consumer == consumer;
  }

  // Marks entry `e` (and, cumulative, every one below it) acknowledged at `at`; unknown
  // entries and repeated acks count nothing. REQUIRES: mu held, a session.
  void on_acked(std::uint64_t e, bool cumulative, Clock::time_point at) {
    Session& s = *session;
    const std::uint64_t last = std::min<std::uint64_t>(e, s.sent);
    const std::uint64_t first = cumulative ? s.acked_below + 1 : e;
    for (std::uint64_t k = std::max<std::uint64_t>(first, 1); k <= last; ++k) {
      if (s.is_acked[k - 1]) continue;
      s.is_acked[k - 1] = true;
      s.ack_read[k - 1] = at;
      ++s.acked;
    }
    while (s.acked_below < s.sent && s.is_acked[s.acked_below]) ++s.acked_below;
  }

  // B1: one permit per single message; never past the consumer's grant. Phase 1 sends the
  // next message once the previous one is acknowledged; phase 2 all the grant allows, in one
  // write. REQUIRES: mu held, a session.
  void dispatch_locked(const std::shared_ptr<Conn>& conn) {
    Session& s = *session;
    const std::int64_t available = s.granted - static_cast<std::int64_t>(s.sent);
    if (available <= 0 || s.sent == total()) return;
    const auto phase1 = static_cast<std::uint64_t>(options.latency_messages);
    std::uint64_t n = 0;
    if (s.sent < phase1) {
      if (s.acked < s.sent) return;  // one at a time
      n = 1;
    } else {
      n = std::min(static_cast<std::uint64_t>(available), total() - s.sent);
    }
    std::string bytes;
    const std::optional<std::uint64_t> permits =
        options.send_message_permits ? std::optional<std::uint64_t>(1) : std::nullopt;
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::uint64_t entry = s.sent + 1 + k;
      bytes += internal::entry_frame(Delivery{.entry = entry},
                                     {.consumer = s.consumer, .ledger = kLedger,
                                      .batch_size = 1, .message_permits = permits});
    }
    const Clock::time_point now = Clock::now();
    for (std::uint64_t k = 0; k < n; ++k) s.written[s.sent + k] = now;
    s.sent += n;
    write(conn, std::move(bytes));
  }

  // REQUIRES: mu held, a session with every message acknowledged.
  void finish_locked() {
    const Session& s = *session;
    ThroughputSession r{.granted = s.granted, .flows = s.flows, .acks = s.acks};
    const auto phase1 = static_cast<std::size_t>(options.latency_messages);
    Clock::time_point last_ack = s.ack_read.empty() ? Clock::time_point() : s.ack_read[0];
    for (std::size_t k = 0; k < s.written.size(); ++k) {
      const double us = micros(s.ack_read[k] - s.written[k]);
      (k < phase1 ? r.latency_us : r.loaded_us).push_back(us);
      last_ack = std::max(last_ack, s.ack_read[k]);
    }
    if (options.rate_messages > 0) {
      r.rate_seconds = std::chrono::duration<double>(last_ack - s.written[phase1]).count();
      if (r.rate_seconds > 0) r.messages_per_second = options.rate_messages / r.rate_seconds;
    }
    finished.push_back({absl::OkStatus(), std::move(r)});
    session.reset();
    cv.notify_all();
  }

  // REQUIRES: mu held, a session.
  void fail_locked(const std::string& why) {
    finished.push_back({absl::AbortedError(absl::StrCat(why, " (", progress_locked(), ")")), {}});
    session.reset();
    cv.notify_all();
  }

  void abort_session(int cnx, const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (session && session->cnx == cnx) fail_locked(why);
  }

  // REQUIRES: mu held.
  std::string progress_locked() const {
    if (!session) return "no consumer subscribed";
    return absl::StrCat(session->acked, " of ", total(), " messages acked, ", session->sent,
                        " sent, ", session->granted, " permits granted in ", session->flows,
                        " Flows");
  }
};

ThroughputBroker::ThroughputBroker(ThroughputOptions options)
    : impl_(std::make_unique<Impl>(options)) {}

ThroughputBroker::~ThroughputBroker() { stop(); }

absl::Status ThroughputBroker::start() {
  absl::StatusOr<std::uint16_t> port = internal::listen_loopback(impl_->acceptor);
  if (!port.ok()) return port.status();
  port_ = *port;
  impl_->url = url();
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
  return absl::OkStatus();
}

std::string ThroughputBroker::url() const { return absl::StrCat("pulsar://127.0.0.1:", port_); }

absl::StatusOr<ThroughputSession> ThroughputBroker::wait_session(
    std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  if (!impl_->cv.wait_for(lock, timeout, [&] { return !impl_->finished.empty(); })) {
    return absl::DeadlineExceededError(
        absl::StrCat("no session finished in ", timeout.count(), " ms (",
                     impl_->progress_locked(), ")"));
  }
  Impl::Finished f = std::move(impl_->finished.front());
  impl_->finished.pop_front();
  if (!f.status.ok()) return f.status;
  return std::move(f.session);
}

void ThroughputBroker::stop() {
  if (!impl_->thread.joinable()) return;
  asio::post(impl_->io, [this] {
    asio::error_code ignored;
    impl_->acceptor.close(ignored);
    std::vector<std::shared_ptr<Impl::Conn>> all;
    for (auto& [id, c] : impl_->conns) all.push_back(c);
    for (auto& c : all) impl_->close(c);
    impl_->io.stop();
  });
  impl_->thread.join();
}

}  // namespace permitcheck::conformance
