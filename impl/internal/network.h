// The connections between the client's pool and the broker. A frame written by one side
// becomes a read task on the other side's queue for that connection (broker I/O or client
// event loop); closing a connection drops every task still queued on either side.
#ifndef PERMITCHECK_IMPL_INTERNAL_NETWORK_H_
#define PERMITCHECK_IMPL_INTERNAL_NETWORK_H_

#include <functional>
#include <string>
#include <vector>

#include "impl/scheduler.h"
#include "impl/wire.h"

namespace permitcheck::impl::internal {

struct Connection {
  int id = 0;
  std::string name;  // trace id: "c1", "c2", ...
  bool open = true;
  int client_loop = -1;  // scheduler queue of the client's event loop
  int broker_io = -1;    // scheduler queue of the broker's connection I/O
};

class Network {
 public:
  using Handler = std::function<void(int cnx, const Frame&)>;

  explicit Network(Scheduler& scheduler) : scheduler_(scheduler) {}

  void set_handlers(Handler to_broker, Handler to_client) {
    broker_ = std::move(to_broker);
    client_ = std::move(to_client);
  }

  // A new open connection with its two queues.
  Connection& open();

  // Closes `cnx`: pending reads and writes on both sides are lost.
  void close(int cnx);

  // Writes a frame; it is read later on the peer's queue. Dropped on a closed connection.
  void to_broker(int cnx, Frame frame);
  void to_client(int cnx, Frame frame);

  Connection& connection(int cnx) { return connections_[static_cast<std::size_t>(cnx)]; }
  const Connection& connection(int cnx) const { return connections_[static_cast<std::size_t>(cnx)]; }
  int count() const { return static_cast<int>(connections_.size()); }
  Scheduler& scheduler() { return scheduler_; }

 private:
  Scheduler& scheduler_;
  std::vector<Connection> connections_;
  Handler broker_;
  Handler client_;
};

}  // namespace permitcheck::impl::internal

#endif  // PERMITCHECK_IMPL_INTERNAL_NETWORK_H_
