#include "conformance/broker.h"

#include <array>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "asio.hpp"
#include "conformance/internal/entry_frame.h"
#include "conformance/internal/handshake.h"
#include "conformance/internal/listener.h"
#include "conformance/internal/write_queue.h"
#include "protocol/frame.h"
#include "spec/finalize.h"
#include "spec/ruleset.h"

namespace permitcheck::conformance {

using asio::ip::tcp;

std::string_view entry_fault_name(EntryFault fault) {
  switch (fault) {
    case EntryFault::kNone: return "none";
    case EntryFault::kChecksum: return "checksum";
    case EntryFault::kMetadata: return "metadata";
    case EntryFault::kTruncatedBatch: return "truncated_batch";
    case EntryFault::kExtraMessages: return "extra_messages";
    case EntryFault::kDecompression: return "decompression";
  }
  return "?";
}

std::string_view cut_name(Cut cut) {
  switch (cut) {
    case Cut::kSizeField3: return "size3";
    case Cut::kSizeField1: return "size1";
    case Cut::kSizeField2: return "size2";
    case Cut::kBoundary: return "boundary";
    case Cut::kMetadata: return "metadata";
    case Cut::kPayload: return "payload";
  }
  return "?";
}

std::string subscription_type_name(int subtype) {
  switch (subtype) {
    case 0: return "Exclusive";
    case 1: return "Shared";
    case 2: return "Failover";
    case 3: return "Key_Shared";
  }
  return absl::StrCat("SubType ", subtype);
}

namespace {

constexpr std::uint64_t kLedger = 7;

spec::Id cnx_id(int n) { return spec::Id::text(absl::StrCat("c", n)); }

std::optional<std::string> validation_error_name(wire::CommandAck::ValidationError e) {
  switch (e) {
    case wire::CommandAck::UncompressedSizeCorruption: return "uncompressed_size";
    case wire::CommandAck::DecompressionError: return "decompression";
    case wire::CommandAck::ChecksumMismatch: return "checksum";
    case wire::CommandAck::BatchDeSerializeError: return "batch_deserialize";
    case wire::CommandAck::DecryptionError: return "decryption";
  }
  return std::nullopt;
}

}  // namespace

struct ConformanceBroker::Impl {
  struct Conn {
    int id = 0;
    tcp::socket socket;
    std::array<char, 65536> buffer{};
    FrameSplitter splitter;
    internal::WriteQueue writes{socket, kMaxQueuedBytes};
    bool closed = false;
    explicit Conn(asio::io_context& io) : socket(io) {}
  };
  struct EntryState {
    spec::Id cmd;
    std::set<std::int64_t> deliverable;
    std::set<std::int64_t> acked;
    bool done = false;
    std::chrono::steady_clock::time_point sent_at;  // its MESSAGE's write (the latest one)
  };
  // How long the client takes to finish an entry it could work on: from its MESSAGE, or from
  // the previous entry's last acknowledgement when that came later (time spent queued behind
  // other entries is not the client's slowness). The longest such time is BrokerView's
  // slowest_ack.
  struct AckTiming {
    std::chrono::steady_clock::time_point last_finish{};
    std::chrono::milliseconds slowest{0};
    void finished(std::chrono::steady_clock::time_point sent_at) {
      const auto now = std::chrono::steady_clock::now();
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
          now - std::max(sent_at, last_finish));
      slowest = std::max(slowest, took);
      last_finish = now;
    }
  };
  // How long the client takes to write a Flow once it can: from its previous command, when
  // the broker wrote no MESSAGE between the two (a Flow that follows a delivery waits on the
  // client's receive loop, which is not the gap E5 is judged in). The longest such gap is
  // BrokerView's slowest_flow.
  struct FlowTiming {
    std::optional<std::chrono::steady_clock::time_point> last_command;
    std::chrono::milliseconds slowest{0};
    void command(bool flow) {
      const auto now = std::chrono::steady_clock::now();
      if (flow && last_command) {
        slowest = std::max(slowest, std::chrono::duration_cast<std::chrono::milliseconds>(
                                        now - *last_command));
      }
      last_command = now;
    }
    void message_written() { last_command.reset(); }
  };
  struct Live {
    int cnx = 0;
    std::uint64_t consumer = 0;
    std::int64_t granted = 0;
    std::int64_t debited = 0;
    int flows = 0;
    std::map<std::uint64_t, EntryState> entries;
    std::optional<std::uint64_t> start_entry;
    std::int64_t acked_messages = 0;
    std::optional<std::uint64_t> epoch;  // M2: from Subscribe or REDELIVER; MESSAGE carries it
    int epoch_requests = 0;
    std::int64_t acked_late = 0;  // acked by the next incarnation's consumer (ended only)
    int subtype = 0;              // its Subscribe's SubType
  };

  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::string url;
  bool send_field = true;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::vector<spec::Event> events;
  std::map<int, std::shared_ptr<Conn>> conns;
  std::optional<Live> live;
  std::optional<Live> ended;  // the last incarnation that ended, for the view after a crash
  BrokerView counters;
  AckTiming ack_timing;
  FlowTiming flow_timing;

  void end_live() {
    if (live) ended = std::move(live);
    live.reset();
  }
  std::uint64_t next_cmd = 1;
  std::uint64_t next_request = 1000000;

  // ---- io thread ----

  // Connections one client run may hold at once; past it a new one is closed at once and
  // noted as a protocol error (a client opening connections without end is bounded).
  static constexpr int kMaxLiveConnections = 64;
  // Events one client run may record (a normal run records a few thousand): past it the
  // client floods the broker (FLOW(0) frames, say), the run's trace ends, its connections are
  // closed and no more are accepted, with a protocol error naming the cap.
  static constexpr std::size_t kMaxRecordedEvents = 200'000;
  // Bytes waiting to be written on one connection: past it the client does not read what it
  // asks for, and the connection is closed with a protocol error naming the cap.
  static constexpr std::size_t kMaxQueuedBytes = std::size_t{16} << 20;
  bool flooded = false;  // kMaxRecordedEvents reached (under mu)
  int refused_connections = 0;  // past kMaxLiveConnections (under mu)
  // Protocol errors kept per run: a client sending garbage on connection after connection
  // is reported by its first ones.
  static constexpr std::size_t kMaxProtocolErrors = 100;
  asio::steady_timer accept_retry{io};

  // Whether the run has recorded kMaxRecordedEvents; the first time, notes the protocol error.
  // REQUIRES: mu held.
  bool over_event_cap() {
    if (flooded) return true;
    if (events.size() < kMaxRecordedEvents) return false;
    flooded = true;
    counters.protocol_errors.push_back(absl::StrCat(
        "more than ", kMaxRecordedEvents, " events in one run (the client floods the broker "
        "with frames): recording stopped, its connections closed"));
    return true;
  }

  void accept() {
    auto conn = std::make_shared<Conn>(io);
    acceptor.async_accept(conn->socket, [this, conn](const asio::error_code& ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;  // stop()
      if (ec) {
        // EMFILE, ENFILE, ENOBUFS...: the listening socket is fine; accept again shortly
        // rather than never (which would make every later connection look like the client's
        // fault).
        accept_retry.expires_after(std::chrono::milliseconds(20));
        accept_retry.async_wait([this](const asio::error_code& e) {
          if (!e) accept();
        });
        return;
      }
      bool refused = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (over_event_cap()) {
          refused = true;  // noted once, when the cap was reached
        } else if (counters.live_connections >= kMaxLiveConnections) {
          refused = true;
          if (!refused_connections++) {  // noted once: a client retrying costs nothing more
            counters.protocol_errors.push_back(absl::StrCat(
                "more than ", kMaxLiveConnections, " connections open at once: refused"));
          }
        }
      }
      if (refused) {
        asio::error_code ignored;
        conn->socket.close(ignored);
        cv.notify_all();
        accept();
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        conn->id = ++counters.connections_opened;
        ++counters.live_connections;
        conns[conn->id] = conn;
        events.push_back(spec::Connect{cnx_id(conn->id)});
      }
      cv.notify_all();
      asio::error_code ignored;
      conn->socket.set_option(tcp::no_delay(true), ignored);
      read(conn);
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
          conn->splitter.append(std::string_view(conn->buffer.data(), n));
          while (true) {
            absl::StatusOr<std::optional<std::string>> f = conn->splitter.next();
            if (!f.ok()) {
              protocol_error(conn, std::string(f.status().message()));
              return;
            }
            if (!f->has_value()) break;
            absl::StatusOr<Frame> frame = decode_frame(**f);
            if (!frame.ok()) {
              if (std::optional<UnknownCommand> u = unknown_command(**f)) {
                answer_unimplemented(conn, *u);
                continue;
              }
              protocol_error(conn, std::string(frame.status().message()));
              return;
            }
            handle(conn, *frame);
            if (conn->closed) return;
          }
          read(conn);
        });
  }

  void protocol_error(const std::shared_ptr<Conn>& conn, std::string reason) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (counters.protocol_errors.size() < kMaxProtocolErrors) {
        counters.protocol_errors.push_back(
            absl::StrCat("connection c", conn->id, ": ", reason));
      }
    }
    close(conn);
  }

  // Records the disconnect once and ends the live incarnation if it was on `conn` (B11).
  void close(const std::shared_ptr<Conn>& conn) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (conn->closed) return;
      conn->closed = true;
      conn->writes.close();
      --counters.live_connections;
      counters.last_activity = std::chrono::steady_clock::now();
      events.push_back(spec::Disconnect{cnx_id(conn->id)});
      if (live && live->cnx == conn->id) end_live();
      conns.erase(conn->id);
    }
    asio::error_code ignored;
    conn->socket.shutdown(tcp::socket::shutdown_both, ignored);
    conn->socket.close(ignored);
    cv.notify_all();
  }

  void write(const std::shared_ptr<Conn>& conn, std::string bytes) {
    if (!conn->writes.push(std::move(bytes), conn, [this, conn] { close(conn); }).ok()) {
      protocol_error(conn, absl::StrCat("more than ", kMaxQueuedBytes >> 20,
                                        " MiB waiting to be written (the client does not read "
                                        "what it asked for): connection closed"));
    }
  }

  void send(const std::shared_ptr<Conn>& conn, const wire::BaseCommand& cmd) {
    write(conn, encode_command(cmd));
  }

  void handle(const std::shared_ptr<Conn>& conn, const Frame& frame) {
    const wire::BaseCommand& in = frame.command;
    wire::BaseCommand out;
    bool flood = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      flood = over_event_cap();
    }
    if (flood) {
      close(conn);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      ++counters.frames_in;
      // Keep-alives are not activity: quiescence is silence apart from them.
      const bool keep_alive =
          in.type() == wire::BaseCommand::PING || in.type() == wire::BaseCommand::PONG;
      if (keep_alive) {
        ++counters.pings;
      } else {
        counters.last_activity = std::chrono::steady_clock::now();
        flow_timing.command(in.type() == wire::BaseCommand::FLOW);
      }
    }
    cv.notify_all();
    if (std::optional<wire::BaseCommand> answer = internal::handshake_answer(in, url)) {
      send(conn, *answer);
      return;
    }
    switch (in.type()) {
      case wire::BaseCommand::SUBSCRIBE: {
        const std::uint64_t consumer = in.subscribe().consumer_id();
        {
          std::lock_guard<std::mutex> lock(mu);
          // As Pulsar does (pulsar-broker 4.2.4, ServerCnx.java:1406-1413, handleSubscribe):
          // a SUBSCRIBE of a consumer id already live on this connection is answered SUCCESS
          // and the existing consumer kept, its permits included; no new incarnation.
          if (live && live->cnx == conn->id && live->consumer == consumer) {
            ++counters.repeated_subscribes;
            out.set_type(wire::BaseCommand::SUCCESS);
            out.mutable_success()->set_request_id(in.subscribe().request_id());
          }
        }
        if (out.has_success()) {
          send(conn, out);
          return;
        }
        {
          std::lock_guard<std::mutex> lock(mu);
          events.push_back(spec::Subscribe{cnx_id(conn->id), consumer, std::nullopt});
          events.push_back(spec::SubscribeOk{cnx_id(conn->id), consumer});
          live = Live{.cnx = conn->id, .consumer = consumer};
          if (in.subscribe().has_consumer_epoch()) live->epoch = in.subscribe().consumer_epoch();
          if (in.subscribe().has_start_message_id()) {
            live->start_entry = in.subscribe().start_message_id().entryid();
          }
          ++counters.subscribes;
        }
        cv.notify_all();
        out.set_type(wire::BaseCommand::SUCCESS);
        out.mutable_success()->set_request_id(in.subscribe().request_id());
        send(conn, out);
        on_subscribed(conn, in.subscribe());
        return;
      }
      case wire::BaseCommand::FLOW: {
        {
          std::lock_guard<std::mutex> lock(mu);
          const std::uint64_t consumer = in.flow().consumer_id();
          const std::int64_t permits = in.flow().messagepermits();
          events.push_back(spec::Flow{cnx_id(conn->id), consumer, permits, std::nullopt});
          if (live && live->cnx == conn->id && live->consumer == consumer) {
            live->granted += permits;
            ++live->flows;
          }
        }
        cv.notify_all();
        return;
      }
      case wire::BaseCommand::ACK: {
        on_ack(conn, in.ack());
        if (in.ack().has_request_id()) {
          out.set_type(wire::BaseCommand::ACK_RESPONSE);
          out.mutable_ackresponse()->set_consumer_id(in.ack().consumer_id());
          out.mutable_ackresponse()->set_request_id(in.ack().request_id());
          send(conn, out);
        }
        return;
      }
      case wire::BaseCommand::REDELIVER_UNACKNOWLEDGED_MESSAGES: {
        {
          std::lock_guard<std::mutex> lock(mu);
          const auto& r = in.redeliverunacknowledgedmessages();
          events.push_back(spec::Extension{"x-redeliver"});
          if (r.message_ids_size() == 0) ++counters.redeliver_all_requests;
          // M2: a newer epoch; later MESSAGE commands carry it, older ones are stale.
          if (live && live->cnx == conn->id && live->consumer == r.consumer_id() &&
              r.has_consumer_epoch() && (!live->epoch || r.consumer_epoch() > *live->epoch)) {
            live->epoch = r.consumer_epoch();
            ++live->epoch_requests;
            // A single-active consumer's epoch request redelivers everything unacknowledged.
            if (r.message_ids_size() > 0) ++counters.redeliver_all_requests;
            events.push_back(spec::Extension{absl::StrCat("x-consumer-epoch-", *live->epoch)});
          }
          for (const auto& id : r.message_ids()) {
            counters.redeliver_requests.push_back(id.entryid());
            if (live) {
              auto it = live->entries.find(id.entryid());
              if (it != live->entries.end()) it->second.done = true;  // redelivered as new
            }
            // A message of the previous incarnation, nacked: finished, not held any more.
            if (live && ended && !live->entries.contains(id.entryid())) {
              auto it = ended->entries.find(id.entryid());
              if (it == ended->entries.end()) continue;
              if (id.batch_index() >= 0) it->second.acked.insert(id.batch_index());
              else it->second.acked = it->second.deliverable;
              if (it->second.acked.size() >= it->second.deliverable.size()) it->second.done = true;
            }
          }
        }
        cv.notify_all();
        return;
      }
      case wire::BaseCommand::CLOSE_CONSUMER:
      case wire::BaseCommand::UNSUBSCRIBE: {
        const bool close = in.type() == wire::BaseCommand::CLOSE_CONSUMER;
        const std::uint64_t consumer =
            close ? in.close_consumer().consumer_id() : in.unsubscribe().consumer_id();
        {
          std::lock_guard<std::mutex> lock(mu);
          events.push_back(spec::CloseConsumer{cnx_id(conn->id), consumer});
          if (live && live->cnx == conn->id && live->consumer == consumer) end_live();
        }
        cv.notify_all();
        out.set_type(wire::BaseCommand::SUCCESS);
        out.mutable_success()->set_request_id(close ? in.close_consumer().request_id()
                                                    : in.unsubscribe().request_id());
        send(conn, out);
        return;
      }
      case wire::BaseCommand::CONSUMER_STATS: {
        out.set_type(wire::BaseCommand::CONSUMER_STATS_RESPONSE);
        auto* r = out.mutable_consumerstatsresponse();
        r->set_request_id(in.consumerstats().request_id());
        std::lock_guard<std::mutex> lock(mu);
        if (live) {
          r->set_availablepermits(
              static_cast<std::uint64_t>(std::max<std::int64_t>(0, live->granted - live->debited)));
        }
        send(conn, out);
        return;
      }
      case wire::BaseCommand::GET_LAST_MESSAGE_ID: {
        out.set_type(wire::BaseCommand::GET_LAST_MESSAGE_ID_RESPONSE);
        auto* r = out.mutable_getlastmessageidresponse();
        r->set_request_id(in.getlastmessageid().request_id());
        r->mutable_last_message_id()->set_ledgerid(kLedger);
        r->mutable_last_message_id()->set_entryid(0);
        send(conn, out);
        return;
      }
      case wire::BaseCommand::PONG:
      case wire::BaseCommand::ACK_RESPONSE:
        return;
      default:
        answer_unimplemented(conn, in);
        return;
    }
  }

  // After a Subscribe's SUCCESS: the subscription type is kept; a Failover consumer is told
  // it is active, as a broker tells each Failover consumer on a membership change.
  void on_subscribed(const std::shared_ptr<Conn>& conn, const wire::CommandSubscribe& sub) {
    bool failover = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!live || live->cnx != conn->id || live->consumer != sub.consumer_id()) return;
      live->subtype = sub.subtype();
      failover = sub.subtype() == 2;
    }
    if (failover) active_consumer_change(conn, sub.consumer_id(), true);
  }

  // Writes ACTIVE_CONSUMER_CHANGE and records it (an `x-` event: no permit moves).
  void active_consumer_change(const std::shared_ptr<Conn>& conn, std::uint64_t consumer,
                              bool is_active) {
    {
      std::lock_guard<std::mutex> lock(mu);
      events.push_back(spec::Extension{
          absl::StrCat("x-active-consumer-change-", is_active ? "active" : "inactive")});
      ++counters.active_consumer_changes;
      counters.last_activity = std::chrono::steady_clock::now();
    }
    wire::BaseCommand out;
    out.set_type(wire::BaseCommand::ACTIVE_CONSUMER_CHANGE);
    out.mutable_active_consumer_change()->set_consumer_id(consumer);
    out.mutable_active_consumer_change()->set_is_active(is_active);
    send(conn, out);
    cv.notify_all();
  }

  // A command the broker does not implement gets a protocol ERROR (with its request id where
  // the command has one), never silence, and an `x-unimplemented-NAME` event in the trace.
  void answer_unimplemented(const std::shared_ptr<Conn>& conn, const wire::BaseCommand& in) {
    std::uint64_t request_id = 0;
    if (in.has_seek()) request_id = in.seek().request_id();
    if (in.has_getschema()) request_id = in.getschema().request_id();
    if (in.has_getorcreateschema()) request_id = in.getorcreateschema().request_id();
    const std::string name = wire::BaseCommand::Type_Name(in.type());
    answer_unimplemented(conn, absl::StrCat("x-unimplemented-", name),
                         absl::StrCat(name, " is not implemented"), request_id);
  }

  // A well-formed command of a type our proto does not know: the same, noted as
  // `x-unsupported-command-N`, the ERROR only when its body names a request id.
  void answer_unimplemented(const std::shared_ptr<Conn>& conn, const UnknownCommand& u) {
    answer_unimplemented(conn, absl::StrCat("x-unsupported-command-", u.type),
                         absl::StrCat("command type ", u.type, " not implemented"), u.request_id);
  }

  // Both: the trace note `event`, then a protocol ERROR with `message` to `request_id` (none:
  // no answer); the connection stays open.
  void answer_unimplemented(const std::shared_ptr<Conn>& conn, std::string event,
                            const std::string& message, std::optional<std::uint64_t> request_id) {
    {
      std::lock_guard<std::mutex> lock(mu);
      events.push_back(spec::Extension{std::move(event)});
    }
    if (!request_id) return;
    wire::BaseCommand out;
    out.set_type(wire::BaseCommand::ERROR);
    auto* e = out.mutable_error();
    e->set_request_id(*request_id);
    e->set_error(wire::UnknownError);
    e->set_message(absl::StrCat("permitcheck conformance broker: ", message));
    send(conn, out);
  }

  // Applies one acknowledged id to `inc`'s entries; the units newly acknowledged (validation
  // errors not counted) and the id's command, if it is one of them.
  static std::int64_t apply_ack(Live& inc, const wire::CommandAck& ack,
                                const wire::MessageIdData& id, std::optional<spec::Id>& cmd,
                                AckTiming& timing) {
    std::int64_t newly = 0;
    for (auto& [entry, st] : inc.entries) {
      const bool cumulative = ack.ack_type() == wire::CommandAck::Cumulative;
      if (entry != id.entryid() && !(cumulative && entry < id.entryid())) continue;
      if (entry == id.entryid()) cmd = st.cmd;
      const std::size_t before = st.acked.size();
      if (ack.has_validation_error() || cumulative ||
          (id.batch_index() < 0 && id.ack_set_size() == 0)) {
        st.acked = st.deliverable;
      } else if (id.batch_index() >= 0) {
        st.acked.insert(id.batch_index());
      } else {
        spec::AckSet remaining({id.ack_set().begin(), id.ack_set().end()});
        for (std::int64_t i : st.deliverable) {
          if (!remaining.is_deliverable(i)) st.acked.insert(i);
        }
      }
      if (!ack.has_validation_error()) {
        newly += static_cast<std::int64_t>(st.acked.size() - before);
      }
      if (!st.done && st.acked.size() >= st.deliverable.size()) {
        st.done = true;
        timing.finished(st.sent_at);
      }
    }
    return newly;
  }

  void on_ack(const std::shared_ptr<Conn>& conn, const wire::CommandAck& ack) {
    {
      std::lock_guard<std::mutex> lock(mu);
      for (const wire::MessageIdData& id : ack.message_id()) {
        std::optional<spec::Id> cmd;
        if (live && live->cnx == conn->id && live->consumer == ack.consumer_id()) {
          live->acked_messages += apply_ack(*live, ack, id, cmd, ack_timing);
          // A message of the previous incarnation, acknowledged by the replacement: it
          // finished after the replacement subscribed (the held windows' evidence). The
          // event keeps the entry's name: the monitor knows the command by its incarnation.
          std::optional<spec::Id> previous;
          if (!cmd && ended && ended->consumer == ack.consumer_id()) {
            ended->acked_late += apply_ack(*ended, ack, id, previous, ack_timing);
          }
        } else if (ended && ended->cnx == conn->id && ended->consumer == ack.consumer_id()) {
          // Between CLOSE_CONSUMER and the resubscribe: the ended incarnation's own ack.
          std::optional<spec::Id> ignored;
          (void)apply_ack(*ended, ack, id, ignored, ack_timing);
        }
        std::optional<std::string> error;
        if (ack.has_validation_error()) error = validation_error_name(ack.validation_error());
        events.push_back(spec::Ack{cnx_id(conn->id), ack.consumer_id(),
                                   cmd.value_or(spec::Id::text(absl::StrCat("e", id.entryid()))),
                                   error});
      }
    }
    cv.notify_all();
  }

  BrokerView view_locked() const {
    BrokerView v = counters;
    v.slowest_ack = ack_timing.slowest;
    v.slowest_flow = flow_timing.slowest;
    const std::optional<Live>& shown = live ? live : ended;
    if (shown) {
      v.subscribed = live.has_value();
      v.consumer = shown->consumer;
      v.granted = shown->granted;
      v.debited = shown->debited;
      v.available = shown->granted - shown->debited;
      v.flows = shown->flows;
      v.start_entry = shown->start_entry;
      v.acked_messages = shown->acked_messages;
      v.epoch = shown->epoch;
      v.epoch_requests = shown->epoch_requests;
      v.subscription_type = shown->subtype;
      for (const auto& [entry, st] : shown->entries) {
        v.outstanding += st.done ? 0 : 1;
        if (!st.done && live) v.unacked_entries.push_back(entry);
        if (!st.acked.empty() && st.acked.size() < st.deliverable.size()) {
          v.acked_indexes[entry].assign(st.acked.begin(), st.acked.end());
        }
        if (st.done) continue;
        v.held_units += static_cast<std::int64_t>(st.deliverable.size() - st.acked.size());
      }
    }
    if (live && ended) {
      v.previous_acked_late = ended->acked_late;
      for (const auto& [entry, st] : ended->entries) {
        if (!st.done) {
          v.previous_held_units +=
              static_cast<std::int64_t>(st.deliverable.size() - st.acked.size());
        }
      }
    }
    return v;
  }
};

ConformanceBroker::ConformanceBroker(BrokerOptions options)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
  impl_->send_field = options_.send_message_permits;
}

ConformanceBroker::~ConformanceBroker() { stop(); }

absl::Status ConformanceBroker::start() {
  absl::StatusOr<std::uint16_t> port = internal::listen_loopback(impl_->acceptor);
  if (!port.ok()) return port.status();
  port_ = *port;
  impl_->url = options_.advertised_url.empty() ? url() : options_.advertised_url;
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
  return absl::OkStatus();
}

std::string ConformanceBroker::url() const { return absl::StrCat("pulsar://127.0.0.1:", port_); }

bool ConformanceBroker::wait_until(const std::function<bool(const BrokerView&)>& pred,
                                   std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->cv.wait_for(lock, timeout, [&] { return pred(impl_->view_locked()); });
}

BrokerView ConformanceBroker::view() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->view_locked();
}

absl::Status ConformanceBroker::deliver(const Delivery& d) {
  std::shared_ptr<Impl::Conn> conn;
  std::string bytes;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    const bool to_live = !d.consumer.has_value();
    if (to_live && !impl_->live) return absl::FailedPreconditionError("no live consumer");
    if (impl_->conns.empty()) return absl::FailedPreconditionError("no connection");
    const int cnx = impl_->live ? impl_->live->cnx : impl_->conns.rbegin()->first;
    auto it = impl_->conns.find(cnx);
    if (it == impl_->conns.end()) return absl::FailedPreconditionError("connection gone");
    conn = it->second;
    const std::uint64_t consumer = to_live ? impl_->live->consumer : *d.consumer;
    const std::int64_t b = d.batched ? d.batch_size : 1;

    // B1-B8: the finalized P of this one-entry send.
    const spec::SendEntry entry{.batch_size = b, .ack_set = d.ack_set, .admitted = true};
    const spec::SendResult sent = spec::finalize_permits(
        spec::ruleset(spec::RulesetId::kRevD), spec::DispatcherKind::kSingleActive, {&entry, 1});
    if (sent.overflow) return absl::OutOfRangeError(sent.overflow->reason);
    if (sent.commands.empty()) return absl::InvalidArgumentError("nothing to deliver (B3)");
    const spec::FinalizedCommand& fc = sent.commands.front();
    std::optional<std::uint64_t> field;
    if (impl_->send_field && fc.message_permits) field = *fc.message_permits;

    const spec::Id cmd = spec::Id::number(impl_->next_cmd++);
    const bool live_target = impl_->live && impl_->live->consumer == consumer;
    const std::optional<std::uint64_t> epoch =
        live_target ? impl_->live->epoch : std::optional<std::uint64_t>();
    if (live_target) {
      impl_->events.push_back(spec::Send{
          .consumer = consumer,
          .inc = std::nullopt,
          .dispatcher = spec::DispatcherKind::kSingleActive,
          .entries = {spec::SentEntry{cmd, entry, fc.p}},
          .consumer_debit = sent.consumer_debit,
          .dispatcher_debit = std::nullopt});
    }
    impl_->events.push_back(spec::Message{.cnx = cnx_id(cnx),
                                          .consumer = consumer,
                                          .cmd = cmd,
                                          .message_permits = field,
                                          .ack_set = d.ack_set,
                                          .batch_size = b,
                                          .epoch = epoch ? std::optional<std::int64_t>(
                                                               static_cast<std::int64_t>(*epoch))
                                                         : std::nullopt});
    impl_->counters.last_activity = std::chrono::steady_clock::now();
    impl_->flow_timing.message_written();
    if (live_target) {
      impl_->live->debited += fc.p;
      Impl::EntryState st{.cmd = cmd, .done = d.already_acked,
                          .sent_at = std::chrono::steady_clock::now()};
      for (std::int64_t i = 0; i < b; ++i) {
        if (d.ack_set.absent() || d.ack_set.is_deliverable(i)) st.deliverable.insert(i);
      }
      impl_->live->entries[d.entry] = std::move(st);
    }

    bytes = internal::entry_frame(d, {.consumer = consumer, .ledger = kLedger, .batch_size = b,
                                      .message_permits = field, .epoch = epoch});
  }
  impl_->cv.notify_all();
  asio::post(impl_->io, [this, conn, bytes = std::move(bytes)]() mutable {
    impl_->write(conn, std::move(bytes));
  });
  return absl::OkStatus();
}

absl::Status ConformanceBroker::close_consumer() {
  std::shared_ptr<Impl::Conn> conn;
  wire::BaseCommand out;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->live) return absl::FailedPreconditionError("no live consumer");
    auto it = impl_->conns.find(impl_->live->cnx);
    if (it == impl_->conns.end()) return absl::FailedPreconditionError("connection gone");
    conn = it->second;
    impl_->events.push_back(spec::CloseConsumer{cnx_id(impl_->live->cnx), impl_->live->consumer});
    impl_->counters.last_activity = std::chrono::steady_clock::now();
    out.set_type(wire::BaseCommand::CLOSE_CONSUMER);
    out.mutable_close_consumer()->set_consumer_id(impl_->live->consumer);
    out.mutable_close_consumer()->set_request_id(impl_->next_request++);
    impl_->end_live();
  }
  impl_->cv.notify_all();
  asio::post(impl_->io, [this, conn, bytes = encode_command(out)]() mutable {
    impl_->write(conn, std::move(bytes));
  });
  return absl::OkStatus();
}

absl::Status ConformanceBroker::drop_connection() {
  std::shared_ptr<Impl::Conn> conn;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->live) return absl::FailedPreconditionError("no live consumer");
    auto it = impl_->conns.find(impl_->live->cnx);
    if (it == impl_->conns.end()) return absl::FailedPreconditionError("connection gone");
    conn = it->second;
  }
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> closed = done->get_future();
  asio::post(impl_->io, [this, conn, done] {
    impl_->close(conn);
    done->set_value();
  });
  closed.wait_for(std::chrono::seconds(5));
  return absl::OkStatus();
}

absl::Status ConformanceBroker::notify_active_consumer(bool is_active) {
  std::shared_ptr<Impl::Conn> conn;
  std::uint64_t consumer = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->live) return absl::FailedPreconditionError("no live consumer");
    auto it = impl_->conns.find(impl_->live->cnx);
    if (it == impl_->conns.end()) return absl::FailedPreconditionError("connection gone");
    conn = it->second;
    consumer = impl_->live->consumer;
  }
  asio::post(impl_->io, [this, conn, consumer, is_active] {
    impl_->active_consumer_change(conn, consumer, is_active);
  });
  return absl::OkStatus();
}

void ConformanceBroker::record_extension(std::string ev) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->events.push_back(spec::Extension{std::move(ev)});
}

void ConformanceBroker::mark_quiescent() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->live) {
    impl_->events.push_back(spec::Quiescent{cnx_id(impl_->live->cnx), impl_->live->consumer});
  }
}

void ConformanceBroker::stop() {
  if (!impl_->thread.joinable()) return;
  asio::post(impl_->io, [this] {
    asio::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->accept_retry.cancel();
    std::vector<std::shared_ptr<Impl::Conn>> all;
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      for (auto& [id, c] : impl_->conns) all.push_back(c);
    }
    for (auto& c : all) impl_->close(c);
    impl_->io.stop();
  });
  impl_->thread.join();
}

std::vector<spec::Event> ConformanceBroker::trace() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->events;
}

}  // namespace permitcheck::conformance
