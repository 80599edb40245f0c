#include "impl/world.h"

#include <utility>

#include "impl/internal/broker.h"
#include "impl/internal/client.h"
#include "impl/internal/network.h"
#include "impl/internal/recorder.h"
#include "impl/scheduler.h"

namespace permitcheck::impl {

spec::RulesetId ruleset_of(Mode mode) {
  switch (mode) {
    case Mode::kLegacy:
      return spec::RulesetId::kLegacy;
    case Mode::kRevA:
      return spec::RulesetId::kRevA;
    case Mode::kRevB:
      return spec::RulesetId::kRevB;
    case Mode::kRevC:
      return spec::RulesetId::kRevC;
    case Mode::kRevD:
      return spec::RulesetId::kRevD;
  }
  return spec::RulesetId::kRevD;
}

Mode mode_of(spec::RulesetId ruleset) {
  for (Mode m : {Mode::kLegacy, Mode::kRevA, Mode::kRevB, Mode::kRevC, Mode::kRevD}) {
    if (ruleset_of(m) == ruleset) return m;
  }
  return Mode::kRevD;
}

std::string_view mode_name(Mode mode) { return spec::ruleset(ruleset_of(mode)).name; }

Behaviour behaviour_of(Mode mode) {
  const spec::Ruleset& r = spec::ruleset(ruleset_of(mode));  // its values only
  return Behaviour{.direct_returns = r.direct_returns,
                   .dispatchers = r.finalized_dispatchers,
                   .skipped_release = r.skipped_release,
                   .inconsistent = r.inconsistent,
                   .return_scope = r.return_scope};
}

std::string_view broker_flavour_name(BrokerFlavour flavour) {
  switch (flavour) {
    case BrokerFlavour::kUpgraded:
      return "upgraded";
    case BrokerFlavour::kOld:
      return "old";
    case BrokerFlavour::kStrippingProxy:
      return "stripping_proxy";
  }
  return "upgraded";
}

std::string_view crypto_action_name(CryptoAction action) {
  switch (action) {
    case CryptoAction::kDiscard:
      return "discard";
    case CryptoAction::kFail:
      return "fail";
    case CryptoAction::kConsume:
      return "consume";
  }
  return "consume";
}

namespace {
// Bounds that turn a livelock into a reported failure instead of a hang.
constexpr std::uint64_t kRunAllLimit = 200'000;
constexpr int kQuiesceRounds = 5'000;
constexpr std::uint64_t kQuiesceTaskLimit = 1'000'000;
}  // namespace

struct World::Parts {
  explicit Parts(const WorldConfig& c, BrokerObserver* observer)
      : config(c),
        network(scheduler),
        broker(config, scheduler, network, recorder, observer),
        client(config, scheduler, network, recorder) {}

  void teardown(int cnx, spec::CloseReason reason) {
    if (!network.connection(cnx).open) return;
    network.close(cnx);
    recorder.record(spec::Disconnect{.cnx = spec::Id::text(network.connection(cnx).name)});
    broker.connection_lost(cnx);
    client.connection_closed(cnx, reason);
  }

  WorldConfig config;
  Scheduler scheduler;
  internal::Recorder recorder;
  internal::Network network;
  internal::Broker broker;
  internal::Client client;
};

World::World(const WorldConfig& config, BrokerObserver* observer)
    : parts_(std::make_unique<Parts>(config, observer)) {
  Parts& p = *parts_;
  p.network.set_handlers([&p](int cnx, const Frame& f) { p.broker.on_frame(cnx, f); },
                         [&p](int cnx, const Frame& f) { p.client.on_frame(cnx, f); });
  p.client.close_connection = [&p](int cnx, spec::CloseReason reason) { p.teardown(cnx, reason); };
}

World::~World() = default;

void World::start() {
  parts_->client.start();
  run_all();
}

void World::publish(const std::vector<EntrySpec>& entries) { parts_->broker.publish(entries); }

bool World::step(std::uint64_t choice) {
  const std::vector<int> queues = parts_->scheduler.nonempty();
  if (queues.empty()) return false;
  return parts_->scheduler.run_front(queues[choice % queues.size()]);
}

std::uint64_t World::run_all() { return parts_->scheduler.run_all(kRunAllLimit); }

int World::consume(int consumer, int n) {
  int done = 0;
  while (done < n && parts_->client.consumer(consumer).receive()) ++done;
  return done;
}

bool World::receive_async(int consumer) { return parts_->client.consumer(consumer).receive_async(); }

void World::redeliver(int consumer) {
  parts_->client.consumer(consumer).redeliver_unacknowledged_messages();
}

void World::close_consumer(int consumer, bool graceful) {
  parts_->broker.close_consumer(static_cast<std::uint64_t>(consumer), graceful);
}

void World::drop_connection(int slot) {
  const int cnx = parts_->client.pooled(slot % std::max(1, parts_->config.connections));
  if (cnx >= 0) parts_->teardown(cnx, spec::CloseReason::kDisconnect);
}

void World::fail_next_subscribe() { parts_->broker.fail_next_subscribe(); }

void World::corrupt_next_field(std::uint64_t value) { parts_->broker.corrupt_next_field(value); }

bool World::quiesce() {
  if (!settle()) return false;
  Parts& p = *parts_;
  for (int k = 0; k < p.client.consumer_count(); ++k) {
    const internal::ConsumerImpl& c = p.client.consumer(k);
    if (c.cnx() < 0 || !p.network.connection(c.cnx()).open || !c.ready() || !c.flow_enabled() ||
        c.holding()) {
      continue;
    }
    p.recorder.record(spec::Quiescent{.cnx = spec::Id::text(p.network.connection(c.cnx()).name),
                                      .consumer = c.id()});
  }
  return true;
}

void World::declare_quiescent(std::uint64_t consumer, const spec::Id& cnx) {
  parts_->recorder.record(spec::Quiescent{.cnx = cnx, .consumer = consumer});
}

bool World::settle() {
  Parts& p = *parts_;
  bool settled = false;
  std::uint64_t tasks = 0;
  for (int round = 0; round < kQuiesceRounds && tasks < kQuiesceTaskLimit; ++round) {
    const std::uint64_t ran = p.scheduler.run_all(kRunAllLimit);
    tasks += ran;
    bool moved = ran > 0;
    for (int k = 0; k < p.client.consumer_count(); ++k) {
      while (p.client.consumer(k).receive()) moved = true;
    }
    if (!moved && p.scheduler.idle()) {
      settled = true;
      break;
    }
  }
  return settled;
}

std::vector<World::BrokerConsumerView> World::broker_consumers() const {
  std::vector<BrokerConsumerView> out;
  for (const internal::BrokerConsumer* c : parts_->broker.live_consumers()) {
    out.push_back({.inc = c->inc(),
                   .consumer_id = c->consumer_id(),
                   .available = c->permits(),
                   .unacked_total = c->unacked_total(),
                   .pending = parts_->broker.pending_entries_at(c->serial())});
  }
  return out;
}

bool World::broker_backlog() const {
  return parts_->broker.has_backlog() || parts_->broker.holds_undispatched_entry();
}

std::optional<std::int64_t> World::dispatcher_aggregate() const { return parts_->broker.aggregate(); }

World::ClientConsumerView World::client_consumer(int consumer) const {
  const internal::ConsumerImpl& c = parts_->client.consumer(consumer);
  return {.inc = c.current_inc(),
          .flow_enabled = c.flow_enabled(),
          .accumulator = c.accumulator(),
          .queued = static_cast<std::int64_t>(c.queued()),
          .in_listener = c.in_listener(),
          .prefetched = c.prefetched(),
          .holding = c.holding()};
}

int World::consumers() const { return parts_->client.consumer_count(); }

std::optional<std::int64_t> World::command_returned(std::uint64_t cmd) const {
  for (int k = 0; k < parts_->client.consumer_count(); ++k) {
    const auto& returned = parts_->client.consumer(k).returned_by_command();
    if (auto it = returned.find(cmd); it != returned.end()) return it->second;
  }
  return std::nullopt;
}

bool World::corrupted_on_wire(std::uint64_t cmd) const { return parts_->broker.corrupted(cmd); }

std::shared_ptr<const Payload> World::payload_of(std::uint64_t cmd) const {
  return parts_->broker.payload_of(cmd);
}

const std::vector<spec::Event>& World::events() const { return parts_->recorder.events(); }
void World::record_fact(spec::Extension fact) { parts_->recorder.record(std::move(fact)); }

spec::TraceHeader World::trace_header(spec::RulesetId ruleset) const {
  return spec::TraceHeader{.source = spec::TraceSource::kModel,
                           .ruleset = ruleset,
                           .q = parts_->config.q,
                           .t = parts_->config.threshold()};
}

const WorldConfig& World::config() const { return parts_->config; }

std::vector<std::string> World::pending_queues() const {
  std::vector<std::string> out;
  for (int q : parts_->scheduler.nonempty()) out.push_back(parts_->scheduler.name(q));
  return out;
}

std::uint64_t World::tasks_run() const { return parts_->scheduler.tasks_run(); }

bool World::idle() const { return parts_->scheduler.idle(); }

}  // namespace permitcheck::impl
