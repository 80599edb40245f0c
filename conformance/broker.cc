// The driver's half of ConformanceBroker (the contract: conformance/internal/broker_impl.h):
// the public API a scenario driver calls (deliveries with P finalized and debited, consumer
// closes, connection drops, notifications), the view of the state and the trace. The io
// thread's half, connections and commands, is broker_protocol.cc.
#include "conformance/broker.h"

#include <future>

#include "absl/strings/str_cat.h"
#include "conformance/internal/broker_impl.h"
#include "conformance/internal/entry_frame.h"
#include "conformance/internal/listener.h"
#include "spec/finalize.h"
#include "spec/ruleset.h"

namespace permitcheck::conformance {

using internal::cnx_id;
using internal::kLedger;

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

BrokerView ConformanceBroker::Impl::view_locked() const {
  BrokerView v = counters;
  v.slowest_ack = ack_timing.slowest;
  v.slowest_flow = flow_timing.slowest;
  const std::optional<Live>& shown = live ? live : ended;
  if (shown) {
    v.subscribed = live.has_value();
    v.consumer = shown->consumer;
    v.connection = shown->cnx;
    v.pending_redeliveries = static_cast<int>(pending_redelivery.size());
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

absl::Status ConformanceBroker::Impl::deliver_locked(const Delivery& d,
                                                    std::shared_ptr<Conn>* conn,
                                                    std::string* bytes) {
  const bool to_live = !d.consumer.has_value();
  if (to_live && !live) return absl::FailedPreconditionError("no live consumer");
  if (conns.empty()) return absl::FailedPreconditionError("no connection");
  const int cnx = live ? live->cnx : conns.rbegin()->first;
  auto it = conns.find(cnx);
  if (it == conns.end()) return absl::FailedPreconditionError("connection gone");
  *conn = it->second;
  const std::uint64_t consumer = to_live ? live->consumer : *d.consumer;
  const std::int64_t b = d.batched ? d.batch_size : 1;

  // B1-B8: the finalized P of this one-entry send.
  const spec::SendEntry entry{.batch_size = b, .ack_set = d.ack_set, .admitted = true};
  const spec::SendResult sent = spec::finalize_permits(
      spec::ruleset(spec::RulesetId::kRevD), spec::DispatcherKind::kSingleActive, {&entry, 1});
  if (sent.overflow) return absl::OutOfRangeError(sent.overflow->reason);
  if (sent.commands.empty()) return absl::InvalidArgumentError("nothing to deliver (B3)");
  const spec::FinalizedCommand& fc = sent.commands.front();
  std::optional<std::uint64_t> field;
  if (send_field && fc.message_permits) field = *fc.message_permits;

  const spec::Id cmd = spec::Id::number(next_cmd++);
  const bool live_target = live && live->consumer == consumer;
  const std::optional<std::uint64_t> epoch =
      live_target ? live->epoch : std::optional<std::uint64_t>();
  if (live_target) {
    events.push_back(spec::Send{
        .consumer = consumer,
        .inc = std::nullopt,
        .dispatcher = spec::DispatcherKind::kSingleActive,
        .entries = {spec::SentEntry{cmd, entry, fc.p}},
        .consumer_debit = sent.consumer_debit,
        .dispatcher_debit = std::nullopt});
  }
  events.push_back(spec::Message{.cnx = cnx_id(cnx),
                                 .consumer = consumer,
                                 .cmd = cmd,
                                 .message_permits = field,
                                 .ack_set = d.ack_set,
                                 .batch_size = b,
                                 .epoch = epoch ? std::optional<std::int64_t>(
                                                      static_cast<std::int64_t>(*epoch))
                                                : std::nullopt});
  counters.last_activity = std::chrono::steady_clock::now();
  flow_timing.message_written();
  if (live_target) {
    live->debited += fc.p;
    EntryState st{.cmd = cmd, .done = d.already_acked,
                  .sent_at = std::chrono::steady_clock::now(), .delivery = d};
    for (std::int64_t i = 0; i < b; ++i) {
      if (d.ack_set.absent() || d.ack_set.is_deliverable(i)) st.deliverable.insert(i);
    }
    live->entries[d.entry] = std::move(st);
  }

  *bytes = internal::entry_frame(d, {.consumer = consumer, .ledger = kLedger, .batch_size = b,
                                     .message_permits = field, .epoch = epoch});
  return absl::OkStatus();
}

absl::Status ConformanceBroker::deliver(const Delivery& d) {
  std::shared_ptr<Impl::Conn> conn;
  std::string bytes;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (absl::Status s = impl_->deliver_locked(d, &conn, &bytes); !s.ok()) return s;
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
  std::string bytes;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->live) return absl::FailedPreconditionError("no live consumer");
    auto it = impl_->conns.find(impl_->live->cnx);
    if (it == impl_->conns.end()) return absl::FailedPreconditionError("connection gone");
    conn = it->second;
    out.set_type(wire::BaseCommand::CLOSE_CONSUMER);
    out.mutable_close_consumer()->set_consumer_id(impl_->live->consumer);
    out.mutable_close_consumer()->set_request_id(impl_->next_request++);
    bytes = protocol::encode_command(out);
    impl_->observe(conn, wire::Direction::kToClient, bytes);  // close_consumer
    impl_->counters.last_activity = std::chrono::steady_clock::now();
    impl_->end_live();
  }
  impl_->cv.notify_all();
  asio::post(impl_->io, [this, conn, bytes = std::move(bytes)]() mutable {
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
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  asio::post(impl_->io, [this, conn, done, deadline] {
    impl_->close_after_writes(conn, deadline, [done] { done->set_value(); });
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

