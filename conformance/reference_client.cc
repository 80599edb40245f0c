// permitcheck-reference-client: a rev-d Pulsar consumer built from the specification
// (spec::handle_command decides what each CommandMessage returns, spec::PermitState keeps
// each incarnation's accumulator), speaking the binary protocol over a real socket. It is
// the positive control of `permitcheck conform`: it must pass every scenario.
//
//   permitcheck-reference-client --url pulsar://127.0.0.1:6650 --q 10 --delay-ms 0
//       --nack-every 0 [--topic T] [--subscription S] [--ruleset legacy]   (one command line)
//
// With --ruleset legacy it behaves as legacy Pulsar does, every decision taken from the
// ruleset: commands are handled as legacy (L1-L5, L9: spec::handle_command), a late return goes
// to whatever incarnation is current (ReturnScope::kCurrentConsumer: L6, L7) and a queued Flow
// is written without re-checking its state (FlowRecheck::kNone: L11). It is the negative
// control, which `conform` must catch.
//
// The application model (what the scenarios' windows rely on): every message handed off goes
// to the application at once, which processes them one by one, {delay_ms} each, on the
// client's only thread (a listener on the I/O thread), so a message stays held while frames
// arrive. A message held when its incarnation ends is still processed; its return goes to the
// state it retained (rev-d: dropped, M1/N3). A Flow that comes due is a task queued behind
// the input already received (N5): frames read before it runs are handled first. On every
// Subscribe after the first it sends start_message_id = the last entry handed off, and skips
// a non-batched message at or before it (K4; legacy returns nothing for it, L9).
//
// --lag-ms N (default 0) stands for a client a busy machine keeps off the CPU: it sleeps N ms
// before each acknowledgement and again before each Flow it writes, so a Flow made due by an
// acknowledgement reaches the broker N ms after it. Its permits stay exact; only its timing
// changes (`conform` must not judge it in that gap).
//
// Consumer epoch (M2), as an Exclusive consumer has it: every Subscribe names the client's
// epoch; a negative acknowledgement raises it and asks the broker to redeliver everything
// unacknowledged with the new epoch (naming the nacked message). A held message whose MESSAGE carried an older
// epoch is discarded when the application reaches it, without being processed or acknowledged;
// its unit goes back through the state it retained (rev-d; dropped once that state ended) or,
// legacy, to whatever incarnation is current (L6). The application acknowledges every message
// it processed on the consumer's current connection, also one an earlier incarnation handed
// off (acknowledgement is by message id; the permit return still follows N3).
//
// --mutant NAME seeds one bug of the public record into it, a known-bad input for the scenario
// that must catch it (each alone, the rest of the client rev-d):
//   truncated-batch-discard  a batch whose payload fails past the failing message's size field
//                            (inside its metadata or payload) is discarded whole: 1 permit
//                            returned for the batch, the messages already decoded dropped; a
//                            cut inside the size field or at a message boundary goes through
//                            the correct path (truncation_positions catches it, truncated_batch
//                            does not)
//   non-message-permit       an ACTIVE_CONSUMER_CHANGE is counted as a message: 1 permit
//                            returned for each (active_consumer_change catches it)
//   queued-credit-to-replacement
//                            when its incarnation ends (connection drop or CLOSE_CONSUMER),
//                            the messages the application has not started on are cleared and
//                            their count is credited to the replacement once it subscribed
//                            (drop_before_ack catches it under E3)
//   exit-on-checksum         a message whose checksum fails ends the process (exit status 3),
//                            as a client without error handling does: its credit never comes
//                            back (corrupt_checksum reports the exit under C7)
//   close-on-checksum        a message whose checksum fails makes it close its consumer
//                            (CLOSE_CONSUMER) and never subscribe again, the process still
//                            running (corrupt_checksum: no subscribed consumer, under C7)
//   garbage-on-checksum      a message whose checksum fails makes it write a frame whose
//                            command does not parse before handling the message as it should
//                            (corrupt_checksum: a malformed frame, under C7)
//
// --subscription-type exclusive|shared|failover|key_shared (default exclusive) is the SubType
// its Subscribe names (the conformance broker tells a Failover consumer it is active).
// Exit 0 on SIGTERM/SIGINT; 1 when it cannot reach the broker; 2 on bad arguments.
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "asio.hpp"
#include "protocol/frame.h"
#include "spec/client_command.h"
#include "spec/permit_state.h"
#include "spec/ruleset.h"

namespace pw = permitcheck::wire;
namespace spec = permitcheck::spec;
using permitcheck::protocol::decode_frame;
using permitcheck::protocol::encode_command;
using permitcheck::protocol::Frame;
using permitcheck::protocol::FrameSplitter;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Args {
  std::string host = "127.0.0.1";
  std::string port;
  std::string topic = "persistent://public/default/permitcheck";
  std::string subscription = "permitcheck-sub";
  std::int64_t q = 10;
  int delay_ms = 0;
  int nack_every = 0;
  int lag_ms = 0;  // off the CPU this long before each acknowledgement and each Flow
  // The rules the client follows: rev-d (default), or legacy to act as a negative control.
  const spec::Ruleset* rules = &spec::ruleset(spec::RulesetId::kRevD);
  // --mutant: one seeded bug (see the header comment).
  bool truncated_batch_discard = false;
  bool non_message_permit = false;
  bool queued_credit_to_replacement = false;
  bool exit_on_checksum = false;
  bool close_on_checksum = false;
  bool garbage_on_checksum = false;
  int subtype = 0;  // --subscription-type: the wire SubType of its Subscribe
};

std::optional<Args> parse_args(int argc, char** argv) {
  Args a;
  std::string url;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--url") url = v;
    else if (k == "--topic") a.topic = v;
    else if (k == "--subscription") a.subscription = v;
    else if (k == "--q" && absl::SimpleAtoi(v, &a.q) && a.q >= 1) {}
    else if (k == "--delay-ms" && absl::SimpleAtoi(v, &a.delay_ms)) {}
    else if (k == "--nack-every" && absl::SimpleAtoi(v, &a.nack_every)) {}
    else if (k == "--lag-ms" && absl::SimpleAtoi(v, &a.lag_ms) && a.lag_ms >= 0) {}
    else if (k == "--ruleset" && spec::parse_ruleset(v).ok()) a.rules = *spec::parse_ruleset(v);
    else if (k == "--mutant" && v == "truncated-batch-discard") a.truncated_batch_discard = true;
    else if (k == "--mutant" && v == "non-message-permit") a.non_message_permit = true;
    else if (k == "--mutant" && v == "queued-credit-to-replacement") {
      a.queued_credit_to_replacement = true;
    }
    else if (k == "--mutant" && v == "exit-on-checksum") a.exit_on_checksum = true;
    else if (k == "--mutant" && v == "close-on-checksum") a.close_on_checksum = true;
    else if (k == "--mutant" && v == "garbage-on-checksum") a.garbage_on_checksum = true;
    else if (k == "--subscription-type" && v == "exclusive") a.subtype = 0;
    else if (k == "--subscription-type" && v == "shared") a.subtype = 1;
    else if (k == "--subscription-type" && v == "failover") a.subtype = 2;
    else if (k == "--subscription-type" && v == "key_shared") a.subtype = 3;
    else return std::nullopt;
  }
  const std::string prefix = "pulsar://";
  if (url.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string hp = url.substr(prefix.size());
  const std::size_t colon = hp.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  a.host = hp.substr(0, colon);
  a.port = hp.substr(colon + 1);
  while (!a.port.empty() && a.port.back() == '/') a.port.pop_back();
  return a;
}

// A message handed off to the application, with the permit state it retained (M1).
struct Queued {
  std::shared_ptr<spec::PermitState> state;  // the incarnation it retained (M1)
  std::uint64_t entry = 0;
  std::int64_t index = -1;  // batch index, -1 for a non-batched message
  std::int64_t batch_size = 1;
  std::optional<std::uint64_t> epoch;  // the MESSAGE's consumer_epoch; none: never stale
};

class Client {
 public:
  explicit Client(Args args) : args_(std::move(args)), socket_(io_) {}

  int run() {
    int failures = 0;
    while (!g_stop) {
      if (abandoned_) {  // close-on-checksum: the process stays, the consumer never returns
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      if (!connect_and_subscribe()) {
        if (++failures > 100) return 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      failures = 0;
      serve();  // until the connection ends
      end_incarnation();
      asio::error_code ignored;
      socket_.close(ignored);
      if (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return 0;
  }

 private:
  bool send(const pw::BaseCommand& cmd) {
    asio::error_code ec;
    asio::write(socket_, asio::buffer(encode_command(cmd)), ec);
    return !ec;
  }

  // Reads until one frame is available or `timeout_ms` passes. nullopt on timeout; sets
  // closed_ on EOF or garbage.
  std::optional<Frame> read_frame(int timeout_ms) {
    const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!closed_ && !g_stop) {
      absl::StatusOr<std::optional<std::string>> f = splitter_.next();
      if (!f.ok()) {
        closed_ = true;
        return std::nullopt;
      }
      if (f->has_value()) {
        absl::StatusOr<Frame> frame = decode_frame(**f);
        if (!frame.ok()) {
          std::cerr << "reference-client: bad frame: " << frame.status().message() << "\n";
          closed_ = true;
          return std::nullopt;
        }
        return *std::move(frame);
      }
      const int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
      if (left <= 0 && timeout_ms > 0) return std::nullopt;
      pollfd p{socket_.native_handle(), POLLIN, 0};
      if (::poll(&p, 1, std::max(left, 0)) <= 0) return std::nullopt;
      char buf[65536];
      asio::error_code ec;
      const std::size_t n = socket_.read_some(asio::buffer(buf), ec);
      if (ec) {
        closed_ = true;
        return std::nullopt;
      }
      splitter_.append(std::string_view(buf, n));
    }
    return std::nullopt;
  }

  // Waits for the response of `request_id` (answering pings on the way).
  std::optional<Frame> await(pw::BaseCommand::Type type, int timeout_ms) {
    const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (Clock::now() < until && !closed_) {
      std::optional<Frame> f = read_frame(100);
      if (!f) continue;
      if (f->command.type() == type || f->command.type() == pw::BaseCommand::ERROR) return f;
      handle(*f);
    }
    return std::nullopt;
  }

  bool connect_and_subscribe() {
    closed_ = false;
    splitter_ = FrameSplitter();
    asio::error_code ec;
    tcp::resolver resolver(io_);
    auto endpoints = resolver.resolve(args_.host, args_.port, ec);
    if (ec) return false;
    socket_ = tcp::socket(io_);
    asio::connect(socket_, endpoints, ec);
    if (ec) return false;
    socket_.set_option(tcp::no_delay(true), ec);

    pw::BaseCommand c;
    c.set_type(pw::BaseCommand::CONNECT);
    c.mutable_connect()->set_client_version("permitcheck-reference-client");
    c.mutable_connect()->set_protocol_version(21);
    if (!send(c) || !await(pw::BaseCommand::CONNECTED, 5000)) return false;

    pw::BaseCommand pm;
    pm.set_type(pw::BaseCommand::PARTITIONED_METADATA);
    pm.mutable_partitionmetadata()->set_topic(args_.topic);
    pm.mutable_partitionmetadata()->set_request_id(next_request_++);
    if (!send(pm) || !await(pw::BaseCommand::PARTITIONED_METADATA_RESPONSE, 5000)) return false;

    pw::BaseCommand lk;
    lk.set_type(pw::BaseCommand::LOOKUP);
    lk.mutable_lookuptopic()->set_topic(args_.topic);
    lk.mutable_lookuptopic()->set_request_id(next_request_++);
    if (!send(lk) || !await(pw::BaseCommand::LOOKUP_RESPONSE, 5000)) return false;
    return subscribe();
  }

  // N1/N4: a new permit state per Subscribe attempt; Flow only after SUCCESS.
  bool subscribe() {
    pw::BaseCommand s;
    s.set_type(pw::BaseCommand::SUBSCRIBE);
    auto* sub = s.mutable_subscribe();
    sub->set_topic(args_.topic);
    sub->set_subscription(args_.subscription);
    sub->set_subtype(args_.subtype);
    sub->set_consumer_id(kConsumer);
    sub->set_request_id(next_request_++);
    sub->set_consumer_name("reference");
    sub->set_consumer_epoch(epoch_);
    if (last_handed_off_) {  // resubscribe: start after what the application already has
      sub->mutable_start_message_id()->set_ledgerid(ledger_);
      sub->mutable_start_message_id()->set_entryid(*last_handed_off_);
    }
    start_entry_ = last_handed_off_;
    state_ = std::make_shared<spec::PermitState>(args_.q, spec::default_threshold(args_.q));
    if (!send(s)) return false;
    std::optional<Frame> r = await(pw::BaseCommand::SUCCESS, 5000);
    if (!r || r->command.type() != pw::BaseCommand::SUCCESS) {
      state_->end();
      return false;
    }
    absl::StatusOr<std::int64_t> initial = state_->enable_flow();
    if (!initial.ok() || !flow(*initial)) return false;
    // The queued-credit-to-replacement mutant: the cleared messages' units to the replacement.
    credit(state_, std::exchange(cleared_, 0));
    return true;
  }

  bool flow(std::int64_t permits) {
    if (permits <= 0 || !state_ || !state_->may_write_flow()) return true;  // N5
    return write_flow(permits);
  }

  void lag() const {
    if (args_.lag_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(args_.lag_ms));
  }

  bool write_flow(std::int64_t permits) {
    if (permits <= 0) return true;
    lag();
    pw::BaseCommand f;
    f.set_type(pw::BaseCommand::FLOW);
    f.mutable_flow()->set_consumer_id(kConsumer);
    f.mutable_flow()->set_messagepermits(static_cast<std::uint32_t>(permits));
    return send(f);
  }

  // A return to the state the units belong to (N3); a due Flow is queued as a task (N5).
  // Legacy credits whatever incarnation is current instead (ReturnScope::kCurrentConsumer).
  void credit(std::shared_ptr<spec::PermitState> state, std::int64_t n) {
    if (args_.rules->return_scope == spec::ReturnScope::kCurrentConsumer) state = state_;
    if (n <= 0 || !state) return;
    absl::StatusOr<std::optional<std::int64_t>> due = state->credit(n);
    if (!due.ok()) {
      if (absl::IsOutOfRange(due.status())) closed_ = true;  // N7
      return;  // ended: dropped (M1)
    }
    if (*due) flow_tasks_.push_back(FlowTask{state, **due});
  }

  // N2: the state ends. Messages the application holds stay with it (they are processed and
  // their returns go to the ended state: dropped, M1); nothing waits in a receiver queue.
  void end_incarnation() {
    if (state_) state_->end();
    if (args_.queued_credit_to_replacement) {  // the seeded bug: cleared, counted for later
      cleared_ += static_cast<std::int64_t>(queue_.size());
      queue_.clear();
    }
  }

  void serve() {
    while (!closed_ && !g_stop) {
      if (!queue_.empty()) {
        consume_one();  // the application holds the thread for {delay_ms}
        drain_input();  // the event loop: input already received first, then queued tasks
      } else if (std::optional<Frame> f = read_frame(50)) {
        handle(*f);
        drain_input();
      }
      run_flow_tasks();
    }
  }

  // Handles every frame already readable, without waiting.
  void drain_input() {
    while (!closed_ && !g_stop) {
      std::optional<Frame> f = read_frame(0);
      if (!f) return;
      handle(*f);
    }
  }

  // N5: a queued Flow re-checks, right before it is written, that its state is still the
  // current one (FlowRecheck::kIdentity). Legacy writes it anyway (kNone: L11); the broker
  // credits it to whichever consumer now has the id.
  void run_flow_tasks() {
    std::vector<FlowTask> tasks;
    tasks.swap(flow_tasks_);
    for (const FlowTask& t : tasks) {
      if (closed_) return;
      const bool current = t.state == state_ && t.state->may_write_flow();
      if (!current && args_.rules->flow_recheck == spec::FlowRecheck::kIdentity) continue;
      write_flow(t.permits);
    }
  }

  void consume_one() {
    if (queue_.front().epoch && *queue_.front().epoch < epoch_) {
      // M2: a stale-epoch discard after hand-off; the application never sees it.
      Queued m = std::move(queue_.front());
      queue_.pop_front();
      credit(m.state, 1);
      return;
    }
    const auto until = Clock::now() + std::chrono::milliseconds(args_.delay_ms);
    while (!g_stop && Clock::now() < until) {
      std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(),
                                                            std::chrono::milliseconds(10)));
    }
    Queued m = std::move(queue_.front());
    queue_.pop_front();
    ++consumed_;
    // The unit goes back first (M1), so a Flow it makes due is on the wire before the ack:
    // once the broker has every ack, it has every Flow too.
    credit(m.state, 1);
    pw::BaseCommand c;
    pw::MessageIdData* id;
    if (args_.nack_every > 0 && consumed_ % args_.nack_every == 0) {
      // Exclusive: a new epoch, and everything unacknowledged again (the nacked message
      // named; the epoch makes the broker redeliver all of them).
      ++epoch_;
      c.set_type(pw::BaseCommand::REDELIVER_UNACKNOWLEDGED_MESSAGES);
      c.mutable_redeliverunacknowledgedmessages()->set_consumer_id(kConsumer);
      c.mutable_redeliverunacknowledgedmessages()->set_consumer_epoch(epoch_);
      id = c.mutable_redeliverunacknowledgedmessages()->add_message_ids();
    } else {
      c.set_type(pw::BaseCommand::ACK);
      c.mutable_ack()->set_consumer_id(kConsumer);
      c.mutable_ack()->set_ack_type(pw::CommandAck::Individual);
      id = c.mutable_ack()->add_message_id();
    }
    id->set_ledgerid(ledger_);
    id->set_entryid(m.entry);
    if (m.index >= 0) {
      id->set_batch_index(static_cast<std::int32_t>(m.index));
      id->set_batch_size(static_cast<std::int32_t>(m.batch_size));
    }
    lag();
    send(c);
  }

  void ack_with_error(std::uint64_t entry, pw::CommandAck::ValidationError error) {
    pw::BaseCommand c;
    c.set_type(pw::BaseCommand::ACK);
    c.mutable_ack()->set_consumer_id(kConsumer);
    c.mutable_ack()->set_ack_type(pw::CommandAck::Individual);
    c.mutable_ack()->set_validation_error(error);
    pw::MessageIdData* id = c.mutable_ack()->add_message_id();
    id->set_ledgerid(ledger_);
    id->set_entryid(entry);
    send(c);
  }

  void handle(const Frame& f) {
    const pw::BaseCommand& c = f.command;
    switch (c.type()) {
      case pw::BaseCommand::PING: {
        pw::BaseCommand p;
        p.set_type(pw::BaseCommand::PONG);
        p.mutable_pong();
        send(p);
        return;
      }
      case pw::BaseCommand::CLOSE_CONSUMER:
        if (c.close_consumer().consumer_id() != kConsumer || abandoned_) return;
        end_incarnation();  // N2: a fresh state for the replacement
        if (!subscribe()) closed_ = true;
        return;
      case pw::BaseCommand::MESSAGE:
        on_message(f);
        return;
      case pw::BaseCommand::ACTIVE_CONSUMER_CHANGE:
        // Not a message: no permit (the non-message-permit mutant counts it as one).
        if (args_.non_message_permit &&
            c.active_consumer_change().consumer_id() == kConsumer) {
          credit(state_, 1);
        }
        return;
      default:
        return;
    }
  }

  void on_message(const Frame& f) {
    const pw::CommandMessage& m = f.command.message();
    if (m.consumer_id() != kConsumer || !state_ || !state_->current() || abandoned_) return;
    ledger_ = m.message_id().ledgerid();
    const std::uint64_t entry = m.message_id().entryid();
    spec::CommandSituation s;
    s.inc = spec::Id::number(incarnation_token());
    s.cmd = spec::Id::number(++commands_);
    s.cnx = spec::Id::text("cnx");
    if (m.has_message_permits()) s.message_permits = m.message_permits();
    s.ack_set = spec::AckSet(std::vector<std::int64_t>(m.ack_set().begin(), m.ack_set().end()));

    std::optional<pw::CommandAck::ValidationError> error;
    if (!f.checksum_ok) {
      if (args_.exit_on_checksum) std::_Exit(3);
      if (args_.close_on_checksum) {  // the seeded bug: the consumer closed, never again
        pw::BaseCommand close;
        close.set_type(pw::BaseCommand::CLOSE_CONSUMER);
        close.mutable_close_consumer()->set_consumer_id(kConsumer);
        close.mutable_close_consumer()->set_request_id(next_request_++);
        send(close);
        state_->end();
        abandoned_ = true;
        return;
      }
      if (args_.garbage_on_checksum) {  // the seeded bug: a frame whose command does not parse
        const std::string garbage("\x00\x00\x00\x0a\x00\x00\x00\x06\xff\xff\xff\xff\xff\xff", 14);
        asio::error_code ignored;
        asio::write(socket_, asio::buffer(garbage), ignored);
      }
      s.early_failure = spec::FailureStage::kChecksum;
      error = pw::CommandAck::ChecksumMismatch;
    } else {
      auto parsed = permitcheck::protocol::parse_metadata_and_payload(f.metadata_and_payload);
      if (!parsed.ok()) {
        s.early_failure = spec::FailureStage::kMetadata;
        error = pw::CommandAck::BatchDeSerializeError;
      } else {
        s.batched = parsed->metadata.has_num_messages_in_batch();
        s.batch_size = s.batched ? parsed->metadata.num_messages_in_batch() : 1;
        const bool before_start = start_entry_ && entry <= *start_entry_;
        if (parsed->metadata.compression() != pw::NONE) {
          // This client knows no codec: every compressed payload fails to decompress, after
          // the metadata gave B (L3).
          s.early_failure = spec::FailureStage::kDecompress;
          error = pw::CommandAck::DecompressionError;
        } else if (before_start && !s.batched) {
          s.fates = {spec::IndexFate::kBeforeStart};  // K4 (L9)
        } else if (before_start && s.batch_size > 0) {
          s.fates.assign(static_cast<std::size_t>(s.batch_size), spec::IndexFate::kDuplicate);
        } else if (s.batched && s.batch_size > 0) {
          const auto batch = permitcheck::protocol::parse_batch(
              parsed->payload, static_cast<int>(s.batch_size));
          s.fates.assign(static_cast<std::size_t>(s.batch_size), spec::IndexFate::kDeliver);
          if (batch.failed_at) {
            if (args_.truncated_batch_discard && past_size_field(parsed->payload, batch)) {
              credit(state_, 1);  // the seeded bug: 1 for the batch, the decoded ones dropped
              ack_with_error(entry, pw::CommandAck::BatchDeSerializeError);
              return;
            }
            s.fates[static_cast<std::size_t>(*batch.failed_at)] = spec::IndexFate::kParseFails;
            error = pw::CommandAck::BatchDeSerializeError;
          }
          if (batch.trailing_messages > 0) s.decoded = s.batch_size + batch.trailing_messages;
        }
      }
    }
    const spec::CommandRun run =
        spec::handle_command(*args_.rules, s);
    if (run.closes_connection) {  // C4
      closed_ = true;
      return;
    }
    std::shared_ptr<spec::PermitState> state = state_;
    std::optional<std::uint64_t> epoch;
    if (m.has_consumer_epoch()) epoch = m.consumer_epoch();
    for (const spec::Event& e : run.events) {
      if (const auto* claim = std::get_if<spec::Claim>(&e)) {
        queue_.push_back(Queued{state, entry, s.batched ? claim->index.value_or(0) : -1,
                                s.batch_size, epoch});
      } else if (const auto* restore = std::get_if<spec::Restore>(&e)) {
        (void)restore;
        if (!queue_.empty()) queue_.pop_back();
      } else if (std::get_if<spec::Corrupt>(&e) && !error) {
        error = pw::CommandAck::BatchDeSerializeError;  // C5: inconsistent data
      }
    }
    if (!run.handed_off.empty()) {
      last_handed_off_ = std::max(last_handed_off_.value_or(0), entry);
    }
    credit(state, run.returned_by_command);
    if (error) ack_with_error(entry, *error);
  }

  // Whether a batch failed with the failing message's 4-byte size field whole (the
  // truncated-batch-discard mutant's path).
  static bool past_size_field(const std::string& payload,
                              const permitcheck::protocol::BatchParse& batch) {
    std::size_t at = 0;
    for (const auto& m : batch.messages) at += 4 + m.metadata.ByteSizeLong() + m.payload.size();
    return payload.size() >= at + 4;
  }

  std::uint64_t incarnation_token() const { return reinterpret_cast<std::uintptr_t>(state_.get()); }

  static constexpr std::uint64_t kConsumer = 0;
  Args args_;
  asio::io_context io_;
  tcp::socket socket_;
  FrameSplitter splitter_;
  bool closed_ = false;
  bool abandoned_ = false;  // close-on-checksum: its consumer closed for good
  std::uint64_t next_request_ = 1;
  std::uint64_t commands_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t ledger_ = 0;
  std::uint64_t epoch_ = 0;  // the consumer's epoch (M2), across incarnations
  std::shared_ptr<spec::PermitState> state_;
  std::deque<Queued> queue_;  // held by the application, in order
  std::int64_t cleared_ = 0;  // queued-credit-to-replacement: cleared, not yet credited
  struct FlowTask {
    std::shared_ptr<spec::PermitState> state;
    std::int64_t permits = 0;
  };
  std::vector<FlowTask> flow_tasks_;
  std::optional<std::uint64_t> last_handed_off_;  // entry id, across incarnations
  std::optional<std::uint64_t> start_entry_;      // start_message_id of the current Subscribe
};

}  // namespace

int main(int argc, char** argv) {
  std::optional<Args> args = parse_args(argc, argv);
  if (!args) {
    std::cerr << "usage: permitcheck-reference-client --url pulsar://HOST:PORT [--q N] "
                 "[--delay-ms N] [--nack-every N] [--lag-ms N] [--topic T] [--subscription S] "
                 "[--ruleset R] [--mutant truncated-batch-discard|non-message-permit|"
                 "queued-credit-to-replacement|exit-on-checksum|close-on-checksum|"
                 "garbage-on-checksum] "
                 "[--subscription-type exclusive|shared|failover|key_shared]\n";
    return 2;
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  return Client(*args).run();
}
