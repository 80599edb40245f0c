// The inside of ConformanceBroker (conformance/broker.h), shared by its two halves:
//   conformance/broker.cc           the driver's side: deliveries (P finalized and debited),
//                                   consumer closes, connection drops, the view and the trace;
//   conformance/broker_protocol.cc  the io thread's side: accepting connections, reading
//                                   frames and answering each command the client writes.
// The broker serves; the wire events of the frames the client writes (and of the answers that
// give them meaning: SUCCESS to a SUBSCRIBE, the broker's CLOSE_CONSUMER) are the wire observer's
// (wire/observer.h), fed through observe(). What only the broker knows stays its own record:
// the connection when accepted, each delivery (Send, and its Message with the B and epoch it
// wrote, whatever fault the frame carries) and its `x-` notes.
// Everything in it is guarded by `mu` unless it belongs to the io thread (sockets, write
// queues); the io thread takes `mu` only around state changes, never across a socket call.
// Bounds: kMaxLiveConnections, kMaxRecordedEvents, kMaxQueuedBytes, kMaxProtocolErrors per run.
//
//   #include "conformance/internal/broker_impl.h"   // only broker.cc and broker_protocol.cc
//   std::lock_guard<std::mutex> lock(impl_->mu);
//   BrokerView v = impl_->view_locked();
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_BROKER_IMPL_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_BROKER_IMPL_H_

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "asio.hpp"
#include "conformance/broker.h"
#include "conformance/internal/write_queue.h"
#include "protocol/frame.h"
#include "spec/events.h"
#include "wire/observer.h"

namespace permitcheck::conformance {

namespace internal {
// The ledger id of every entry the broker delivers.
inline constexpr std::uint64_t kLedger = 7;
// The trace's name of connection n: "c1", "c2", ...
inline spec::Id cnx_id(int n) { return spec::Id::text(absl::StrCat("c", n)); }
}  // namespace internal

struct ConformanceBroker::Impl {
  struct Conn {
    int id = 0;
    asio::ip::tcp::socket socket;
    std::array<char, 65536> buffer{};
    protocol::FrameSplitter splitter;
    internal::WriteQueue writes{socket, kMaxQueuedBytes};
    bool closed = false;
    // The connection's wire observer, from its accept on (under mu). The broker records its
    // MESSAGEs itself (deliver_locked) and never feeds it one: its numbering is unused.
    std::optional<wire::Observer> observer;
    std::uint64_t observer_cmds = 1;
    explicit Conn(asio::io_context& io) : socket(io) {}
  };
  struct EntryState {
    spec::Id cmd;
    std::set<std::int64_t> deliverable;
    std::set<std::int64_t> acked;
    bool done = false;
    std::chrono::steady_clock::time_point sent_at;  // its MESSAGE's write (the latest one)
    Delivery delivery;  // what was delivered: a redelivery writes the same entry again
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
    bool client_closed = false;   // ended because the client closed its connection
  };

  asio::io_context io;
  asio::ip::tcp::acceptor acceptor{io};
  std::thread thread;
  std::string url;
  bool send_field = true;

  mutable std::mutex mu;
  std::condition_variable cv;
  std::vector<spec::Event> events;
  std::vector<wire::TimedEvent> observed;  // observe()'s buffer, reused
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

  // Redelivery after a connection the client closed (as Pulsar puts a closed consumer's
  // unacknowledged entries back for the subscription): the ended incarnation's unfinished
  // entries, taken when the replacement subscribes, written to it as its Flows allow. One
  // entry goes back at most kMaxRedeliveriesAfterClientClose times; past it the client loops
  // on it (closes each time) and the entry is noted in BrokerView::redelivery_loops instead.
  static constexpr int kMaxRedeliveriesAfterClientClose = 3;
  std::vector<Delivery> pending_redelivery;
  std::map<std::uint64_t, int> client_close_redeliveries;  // per entry id

  // Delivers `d` as ConformanceBroker::deliver does: P finalized, the live incarnation
  // debited, the send and the message recorded; `*conn` and `*bytes` are what to write.
  // REQUIRES: mu held.
  absl::Status deliver_locked(const Delivery& d, std::shared_ptr<Conn>* conn, std::string* bytes);
  // On the replacement's Subscribe after a client-closed connection: takes the ended
  // incarnation's unfinished entries into pending_redelivery. REQUIRES: mu held, live set.
  void take_redeliveries();
  // Writes pending redeliveries to the live consumer while its balance is positive (after a
  // Flow). The frames to write, with their connection. REQUIRES: mu held.
  std::vector<std::pair<std::shared_ptr<Conn>, std::string>> redeliver_pending();

  // ---- the io thread: connections and commands (broker_protocol.cc) ----

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
  bool over_event_cap();
  void accept();
  void read(const std::shared_ptr<Conn>& conn);
  void protocol_error(const std::shared_ptr<Conn>& conn, std::string reason);
  // Records the disconnect once and ends the live incarnation if it was on `conn` (B11);
  // `by_client`: the client closed it (EOF or reset on read), so that incarnation's
  // unacknowledged entries go back to its replacement (take_redeliveries).
  void close(const std::shared_ptr<Conn>& conn, bool by_client = false);
  // close(conn) once its write queue is idle or at `deadline`, then `done()`.
  void close_after_writes(const std::shared_ptr<Conn>& conn,
                          std::chrono::steady_clock::time_point deadline,
                          std::function<void()> done);
  void write(const std::shared_ptr<Conn>& conn, std::string bytes);
  void send(const std::shared_ptr<Conn>& conn, const wire::BaseCommand& cmd);
  // `bytes`: the whole frame `frame` was decoded from.
  void handle(const std::shared_ptr<Conn>& conn, std::string_view bytes,
              const protocol::Frame& frame);
  // Feeds one whole frame of `conn` (`direction`: the client's, or the broker's answer) to its
  // wire observer and records the events it emits. REQUIRES: mu held.
  wire::FrameFacts observe(const std::shared_ptr<Conn>& conn, wire::Direction direction,
                           std::string_view bytes, const wire::ServerKnowledge* server = nullptr);
  // After a Subscribe's SUCCESS: the subscription type is kept; a Failover consumer is told
  // it is active, as a broker tells each Failover consumer on a membership change.
  void on_subscribed(const std::shared_ptr<Conn>& conn, const wire::CommandSubscribe& sub);
  // Writes ACTIVE_CONSUMER_CHANGE and records it (an `x-` event: no permit moves).
  void active_consumer_change(const std::shared_ptr<Conn>& conn, std::uint64_t consumer,
                              bool is_active);
  // A command the broker does not implement gets a protocol ERROR (with its request id where
  // the command has one), never silence, and an `x-unimplemented-NAME` event in the trace.
  void answer_unimplemented(const std::shared_ptr<Conn>& conn, const wire::BaseCommand& in);
  // A well-formed command of a type our proto does not know: the same, noted as
  // `x-unsupported-command-N`, the ERROR only when its body names a request id.
  void answer_unimplemented(const std::shared_ptr<Conn>& conn, const protocol::UnknownCommand& u);
  // Both: the trace note `event`, then a protocol ERROR with `message` to `request_id` (none:
  // no answer); the connection stays open.
  void answer_unimplemented(const std::shared_ptr<Conn>& conn, std::string event,
                            const std::string& message, std::optional<std::uint64_t> request_id);
  // Applies one acknowledged id to `inc`'s entries; the units newly acknowledged (validation
  // errors not counted) and the id's command, if it is one of them.
  static std::int64_t apply_ack(Live& inc, const wire::CommandAck& ack,
                                const wire::MessageIdData& id, std::optional<spec::Id>& cmd,
                                AckTiming& timing);
  // Applies the ack to the incarnations, then records the observer's events of its frame
  // `bytes`, each id named by the MESSAGE the broker knows it names.
  void on_ack(const std::shared_ptr<Conn>& conn, std::string_view bytes,
              const wire::CommandAck& ack);
  // ---- the state as the scenario driver sees it (broker.cc) ----
  // REQUIRES: mu held.
  BrokerView view_locked() const;
};


}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_BROKER_IMPL_H_
