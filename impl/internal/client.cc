#include "impl/internal/client.h"

#include <utility>

namespace permitcheck::impl::internal {

Client::Client(const WorldConfig& config, Scheduler& scheduler, Network& network,
               Recorder& recorder)
    : config_(config),
      behaviour_(behaviour_of(config.mode)),
      scheduler_(scheduler),
      network_(network),
      recorder_(recorder),
      timer_queue_(scheduler.add_queue(QueueClass::kClientTimer, "client-timer")),
      listener_queue_(scheduler.add_queue(QueueClass::kListener, "listener-executor")) {
  pool_.assign(static_cast<std::size_t>(std::max(1, config.connections)), -1);
  for (int k = 0; k < config.consumers; ++k) {
    consumers_.push_back(std::make_unique<ConsumerImpl>(*this, k));
  }
}

void Client::start() {
  for (auto& c : consumers_) c->connect();
}

int Client::get_connection(int slot) {
  int& cnx = pool_[static_cast<std::size_t>(slot)];
  if (cnx >= 0 && network_.connection(cnx).open) return cnx;
  cnx = network_.open().id;
  recorder_.record(spec::Connect{.cnx = spec::Id::text(network_.connection(cnx).name)});
  return cnx;
}

void Client::execute(int cnx, std::function<void()> task) {
  const Connection& c = network_.connection(cnx);
  if (!c.open) return;
  if (scheduler_.running() == c.client_loop) {
    task();  // already on the event loop: Netty writes at once
  } else {
    scheduler_.post(c.client_loop, std::move(task));
  }
}

void Client::on_frame(int cnx, const Frame& frame) {
  auto consumer_for = [&](std::uint64_t id) -> ConsumerImpl* {
    if (id >= consumers_.size()) return nullptr;
    return consumers_[static_cast<std::size_t>(id)].get();
  };
  if (const auto* m = std::get_if<CommandMessage>(&frame)) {
    if (ConsumerImpl* c = consumer_for(m->consumer_id)) c->message_received(cnx, *m);
  } else if (const auto* ok = std::get_if<CommandSuccess>(&frame)) {
    if (ConsumerImpl* c = consumer_for(ok->consumer_id)) c->on_subscribe_success(cnx);
  } else if (const auto* err = std::get_if<CommandError>(&frame)) {
    if (ConsumerImpl* c = consumer_for(err->consumer_id)) c->on_subscribe_error(cnx);
  } else if (const auto* close = std::get_if<CommandCloseConsumer>(&frame)) {
    // A consumer that closed itself (S7) is no longer in the connection's consumer map: the
    // broker's close of it finds nothing to resubscribe.
    ConsumerImpl* c = consumer_for(close->consumer_id);
    if (c != nullptr && !c->closed()) c->on_close_consumer(cnx);
  }
}

void Client::connection_closed(int cnx, spec::CloseReason reason) {
  for (auto& c : consumers_) c->connection_closed(cnx, reason);
}

}  // namespace permitcheck::impl::internal
