// The io thread's half of ConformanceBroker (the contract: conformance/internal/broker_impl.h):
// accepting connections under the run's bounds, splitting and decoding frames, and answering
// each command a client writes (the handshake, SUBSCRIBE, FLOW, ACK, REDELIVER, CLOSE_CONSUMER,
// CONSUMER_STATS, GET_LAST_MESSAGE_ID; an ERROR for the rest). The wire events of the client's
// commands are recorded from the wire observer (observe()), not built here.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "conformance/internal/broker_impl.h"
#include "conformance/internal/handshake.h"

namespace permitcheck::conformance {

using asio::ip::tcp;
using internal::cnx_id;
using internal::kLedger;

wire::FrameFacts ConformanceBroker::Impl::observe(const std::shared_ptr<Conn>& conn,
                                                  wire::Direction direction,
                                                  std::string_view bytes,
                                                  const wire::ServerKnowledge* server) {
  observed.clear();
  // The broker's trace has no times: the events' order is its clock.
  const wire::FrameFacts facts =
      conn->observer->on_frame(direction, 0, bytes, nullptr, &observed, server);
  for (wire::TimedEvent& e : observed) events.push_back(std::move(e.event));
  return facts;
}

bool ConformanceBroker::Impl::over_event_cap() {
  if (flooded) return true;
  if (events.size() < kMaxRecordedEvents) return false;
  flooded = true;
  counters.protocol_errors.push_back(absl::StrCat(
      "more than ", kMaxRecordedEvents, " events in one run (the client floods the broker "
      "with frames): recording stopped, its connections closed"));
  return true;
}

void ConformanceBroker::Impl::accept() {
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
      conn->observer.emplace(cnx_id(conn->id), &conn->observer_cmds);
      // Recorded when accepted, before any frame (the observer's `connect` is the CONNECT
      // frame's, which the handshake answers without showing it the observer).
      events.push_back(spec::Connect{cnx_id(conn->id)});
    }
    cv.notify_all();
    asio::error_code ignored;
    conn->socket.set_option(tcp::no_delay(true), ignored);
    read(conn);
    accept();
  });
}

void ConformanceBroker::Impl::read(const std::shared_ptr<Conn>& conn) {
  conn->socket.async_read_some(
      asio::buffer(conn->buffer), [this, conn](const asio::error_code& ec, std::size_t n) {
        if (ec) {
          close(conn, /*by_client=*/true);
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
          absl::StatusOr<protocol::Frame> frame = protocol::decode_frame(**f);
          if (!frame.ok()) {
            if (std::optional<protocol::UnknownCommand> u = protocol::unknown_command(**f)) {
              answer_unimplemented(conn, *u);
              continue;
            }
            protocol_error(conn, std::string(frame.status().message()));
            return;
          }
          handle(conn, **f, *frame);
          if (conn->closed) return;
        }
        read(conn);
      });
}

void ConformanceBroker::Impl::protocol_error(const std::shared_ptr<Conn>& conn,
    std::string reason) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (counters.protocol_errors.size() < kMaxProtocolErrors) {
      counters.protocol_errors.push_back(
          absl::StrCat("connection c", conn->id, ": ", reason));
    }
  }
  close(conn);
}

void ConformanceBroker::Impl::close(const std::shared_ptr<Conn>& conn, bool by_client) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (conn->closed) return;
    conn->closed = true;
    conn->writes.close();
    --counters.live_connections;
    counters.last_activity = std::chrono::steady_clock::now();
    observed.clear();
    conn->observer->on_close(0, &observed);  // `disconnect`
    for (wire::TimedEvent& e : observed) events.push_back(std::move(e.event));
    if (live && live->cnx == conn->id) {
      live->client_closed = by_client;
      end_live();
    }
    conns.erase(conn->id);
  }
  asio::error_code ignored;
  conn->socket.shutdown(tcp::socket::shutdown_both, ignored);
  conn->socket.close(ignored);
  cv.notify_all();
}

void ConformanceBroker::Impl::close_after_writes(const std::shared_ptr<Conn>& conn,
                                                std::chrono::steady_clock::time_point deadline,
                                                std::function<void()> done) {
  if (conn->closed || conn->writes.idle() || std::chrono::steady_clock::now() >= deadline) {
    close(conn);
    done();
    return;
  }
  auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(2));
  timer->async_wait([this, conn, deadline, done = std::move(done), timer](
                        const asio::error_code&) mutable {
    close_after_writes(conn, deadline, std::move(done));
  });
}

void ConformanceBroker::Impl::write(const std::shared_ptr<Conn>& conn, std::string bytes) {
  if (!conn->writes.push(std::move(bytes), conn, [this, conn] { close(conn); }).ok()) {
    protocol_error(conn, absl::StrCat("more than ", kMaxQueuedBytes >> 20,
                                      " MiB waiting to be written (the client does not read "
                                      "what it asked for): connection closed"));
  }
}

void ConformanceBroker::Impl::send(const std::shared_ptr<Conn>& conn,
    const wire::BaseCommand& cmd) {
  write(conn, protocol::encode_command(cmd));
}

void ConformanceBroker::Impl::handle(const std::shared_ptr<Conn>& conn, std::string_view bytes,
                                     const protocol::Frame& frame) {
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
      out.set_type(wire::BaseCommand::SUCCESS);
      out.mutable_success()->set_request_id(in.subscribe().request_id());
      std::string answer = protocol::encode_command(out);
      {
        std::lock_guard<std::mutex> lock(mu);
        observe(conn, wire::Direction::kToServer, bytes);    // subscribe
        observe(conn, wire::Direction::kToClient, answer);   // subscribe_ok
        live = Live{.cnx = conn->id, .consumer = consumer};
        if (in.subscribe().has_consumer_epoch()) live->epoch = in.subscribe().consumer_epoch();
        if (in.subscribe().has_start_message_id()) {
          live->start_entry = in.subscribe().start_message_id().entryid();
        }
        take_redeliveries();
        ++counters.subscribes;
      }
      cv.notify_all();
      write(conn, std::move(answer));
      on_subscribed(conn, in.subscribe());
      return;
    }
    case wire::BaseCommand::FLOW: {
      std::vector<std::pair<std::shared_ptr<Conn>, std::string>> redelivered;
      {
        std::lock_guard<std::mutex> lock(mu);
        const std::uint64_t consumer = in.flow().consumer_id();
        const std::int64_t permits = in.flow().messagepermits();
        observe(conn, wire::Direction::kToServer, bytes);  // flow
        if (live && live->cnx == conn->id && live->consumer == consumer) {
          live->granted += permits;
          ++live->flows;
          redelivered = redeliver_pending();
        }
      }
      cv.notify_all();
      for (auto& [c, bytes] : redelivered) write(c, std::move(bytes));
      return;
    }
    case wire::BaseCommand::ACK: {
      on_ack(conn, bytes, in.ack());
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
        observe(conn, wire::Direction::kToServer, bytes);  // x-redeliver
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
        observe(conn, wire::Direction::kToServer, bytes);  // close_consumer
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

void ConformanceBroker::Impl::take_redeliveries() {
  if (!ended || !ended->client_closed) return;
  ended->client_closed = false;
  for (auto& [entry, st] : ended->entries) {
    if (st.done) continue;
    st.done = true;  // it goes back: the replacement's entry from now on
    int& times = client_close_redeliveries[entry];
    if (times >= kMaxRedeliveriesAfterClientClose) {
      counters.redelivery_loops.push_back(entry);
      events.push_back(spec::Extension{absl::StrCat("x-redelivery-loop-e", entry)});
      continue;
    }
    ++times;
    Delivery d = st.delivery;
    d.consumer.reset();
    d.already_acked = false;
    ++d.redelivery_count;
    if (!st.acked.empty()) {  // a batch partly acknowledged: the rest, as a partial batch
      std::vector<std::int64_t> rest;
      for (std::int64_t i : st.deliverable) {
        if (!st.acked.contains(i)) rest.push_back(i);
      }
      d.ack_set = spec::AckSet::from_indexes(rest);
    }
    pending_redelivery.push_back(std::move(d));
  }
}

std::vector<std::pair<std::shared_ptr<ConformanceBroker::Impl::Conn>, std::string>>
ConformanceBroker::Impl::redeliver_pending() {
  std::vector<std::pair<std::shared_ptr<Conn>, std::string>> out;
  while (!pending_redelivery.empty() && live && live->granted - live->debited > 0) {
    const Delivery d = pending_redelivery.front();
    pending_redelivery.erase(pending_redelivery.begin());
    std::shared_ptr<Conn> conn;
    std::string bytes;
    events.push_back(spec::Extension{absl::StrCat("x-redelivered-after-client-close-e", d.entry)});
    if (!deliver_locked(d, &conn, &bytes).ok()) continue;
    ++counters.redelivered_after_client_close;
    out.emplace_back(std::move(conn), std::move(bytes));
  }
  return out;
}

void ConformanceBroker::Impl::on_subscribed(const std::shared_ptr<Conn>& conn,
    const wire::CommandSubscribe& sub) {
  bool failover = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!live || live->cnx != conn->id || live->consumer != sub.consumer_id()) return;
    live->subtype = sub.subtype();
    failover = sub.subtype() == 2;
  }
  if (failover) active_consumer_change(conn, sub.consumer_id(), true);
}

void ConformanceBroker::Impl::active_consumer_change(const std::shared_ptr<Conn>& conn,
    std::uint64_t consumer, bool is_active) {
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

void ConformanceBroker::Impl::answer_unimplemented(const std::shared_ptr<Conn>& conn,
    const wire::BaseCommand& in) {
  std::uint64_t request_id = 0;
  if (in.has_seek()) request_id = in.seek().request_id();
  if (in.has_getschema()) request_id = in.getschema().request_id();
  if (in.has_getorcreateschema()) request_id = in.getorcreateschema().request_id();
  const std::string name = wire::BaseCommand::Type_Name(in.type());
  answer_unimplemented(conn, absl::StrCat("x-unimplemented-", name),
                       absl::StrCat(name, " is not implemented"), request_id);
}

void ConformanceBroker::Impl::answer_unimplemented(const std::shared_ptr<Conn>& conn,
    const protocol::UnknownCommand& u) {
  answer_unimplemented(conn, absl::StrCat("x-unsupported-command-", u.type),
                       absl::StrCat("command type ", u.type, " not implemented"), u.request_id);
}

void ConformanceBroker::Impl::answer_unimplemented(const std::shared_ptr<Conn>& conn,
    std::string event, const std::string& message, std::optional<std::uint64_t> request_id) {
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

std::int64_t ConformanceBroker::Impl::apply_ack(Live& inc, const wire::CommandAck& ack,
                                                const wire::MessageIdData& id,
                                                std::optional<spec::Id>& cmd, AckTiming& timing) {
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

void ConformanceBroker::Impl::on_ack(const std::shared_ptr<Conn>& conn, std::string_view bytes,
    const wire::CommandAck& ack) {
  {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::optional<spec::Id>> names;  // the MESSAGE each id names, as we know it
    names.reserve(static_cast<std::size_t>(ack.message_id_size()));
    for (const wire::MessageIdData& id : ack.message_id()) {
      std::optional<spec::Id>& cmd = names.emplace_back();
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
    }
    const wire::ServerKnowledge server{.acked_cmds = names};
    observe(conn, wire::Direction::kToServer, bytes, &server);  // an ack per id
  }
  cv.notify_all();
}

}  // namespace permitcheck::conformance
