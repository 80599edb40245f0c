#include "impl/internal/network.h"

#include <string>
#include <utility>

namespace permitcheck::impl::internal {

Connection& Network::open() {
  Connection c;
  c.id = static_cast<int>(connections_.size());
  c.name = "c" + std::to_string(c.id + 1);
  c.client_loop = scheduler_.add_queue(QueueClass::kClientLoop, "client-loop " + c.name);
  c.broker_io = scheduler_.add_queue(QueueClass::kBrokerIo, "broker-io " + c.name);
  connections_.push_back(std::move(c));
  return connections_.back();
}

void Network::close(int cnx) {
  Connection& c = connection(cnx);
  c.open = false;
  scheduler_.clear(c.client_loop);
  scheduler_.clear(c.broker_io);
}

void Network::to_broker(int cnx, Frame frame) {
  Connection& c = connection(cnx);
  if (!c.open) return;
  scheduler_.post(c.broker_io, [this, cnx, f = std::move(frame)] {
    if (connection(cnx).open) broker_(cnx, f);
  });
}

void Network::to_client(int cnx, Frame frame) {
  Connection& c = connection(cnx);
  if (!c.open) return;
  scheduler_.post(c.client_loop, [this, cnx, f = std::move(frame)] {
    if (connection(cnx).open) client_(cnx, f);
  });
}

}  // namespace permitcheck::impl::internal
